"""Runs the handler with a request and checks its answer: python3 -m unittest test_handler.py"""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class HandlerTest(unittest.TestCase):
    def test_greets(self):
        request = {"operation": "call", "arguments": {"name": "Ada"}, "callId": "t1", "context": {}}
        out = subprocess.run([sys.executable, os.path.join(HERE, "handler.py")], input=json.dumps(request),
                             capture_output=True, text=True, check=True).stdout
        response = json.loads(out)
        self.assertTrue(response["success"])
        self.assertEqual(response["result"]["greeting"], "Hello, Ada!")


if __name__ == "__main__":
    unittest.main()
