// Package cputime measures the CPU time the process has used, for
// benchmarks: on a shared machine it counts the work a benchmark did, where
// the wall clock also counts the time other processes held the CPU.
package cputime
