"""video_generate_polling: an async tool over the fake video API (it polls the API until the render is done).

The steps are the same for both video tools: they live in ../video_api.py.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ folder beside the tools
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from video_api import main  # noqa: E402

if __name__ == "__main__":
    main()
