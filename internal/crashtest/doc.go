// Package crashtest holds Toolbelt's crash test, in the spirit of SQLite's:
// rounds of random kill -9 under writes from several processes on one data
// directory — `toolbelt call` loops (write, edit, apply_patch, exec, read),
// `toolbelt mcp` clients and HTTP clients of a `toolbelt serve` — each round
// ended by killing every process at once, then checked:
//
//   - `toolbelt audit verify` passes;
//   - every call that was answered is in the audit exactly once, and no call
//     is recorded twice;
//   - every file change is whole: a file holds what one call wrote, and a
//     multi-file patch is there entirely or not at all;
//   - no answered change is lost, and every change on disk has a record;
//   - answered changes are undoable: `toolbelt undo ID` restores a whole
//     earlier state.
//
// The test is TestCrash; its randomness is seeded, and the seed is printed.
// TOOLBELT_CRASH_ROUNDS sets the number of rounds and TOOLBELT_CRASH_SEED
// repeats a run's choices (the moments of the kills still depend on the
// machine). The package has no code of its own besides this comment.
package crashtest
