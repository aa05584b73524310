// gopprof: a known-answer Go workload that profiles itself with runtime/pprof.
// main.alpha does twice the work of main.beta, in alternating slices, for the given
// number of milliseconds; the CPU profile is written to the file named by the argument.
//
//	go build -o gopprof tests/workloads/gopprof.go && ./gopprof cpu.pprof 1500
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func spin(n int) uint64 {
	x := sink
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func alpha() { sink += spin(2000000) }

//go:noinline
func beta() { sink += spin(1000000) }

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gopprof OUT.pprof MILLISECONDS")
		os.Exit(2)
	}
	ms, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad duration:", err)
		os.Exit(2)
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for end := time.Now().Add(time.Duration(ms) * time.Millisecond); time.Now().Before(end); {
		alpha()
		beta()
	}
	pprof.StopCPUProfile()
	f.Close()
}
