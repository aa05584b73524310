// goheap: a Go workload that writes the two pprof profiles Go programs push most, with
// known contents: a heap profile (alloc_objects, alloc_space, inuse_objects, inuse_space;
// every allocation recorded, MemProfileRate 1) where main.keep allocates 64 KiB blocks it
// keeps and main.churn 1 KiB blocks it drops, and a CPU profile whose work runs under the
// pprof labels worker=a and worker=b.
//
//	go build -o goheap tests/workloads/goheap.go && ./goheap heap.pprof cpu.pprof
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

var kept [][]byte
var last []byte
var sink uint64

//go:noinline
func keep(n int) {
	for i := 0; i < n; i++ {
		kept = append(kept, make([]byte, 65536))
	}
}

//go:noinline
func churn(n int) {
	for i := 0; i < n; i++ {
		last = make([]byte, 1024) // escapes: a heap allocation
		sink += uint64(len(last))
	}
}

//go:noinline
func spin(d time.Duration) {
	x := sink
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
}

func write(path string, f func(*os.File) error) {
	out, err := os.Create(path)
	if err == nil {
		err = f(out)
	}
	if err == nil {
		err = out.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, path+":", err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: goheap HEAP.pprof CPU.pprof")
		os.Exit(2)
	}
	runtime.MemProfileRate = 1
	keep(40)
	churn(3000)
	runtime.GC()
	write(os.Args[1], func(f *os.File) error { return pprof.Lookup("heap").WriteTo(f, 0) })

	write(os.Args[2], func(f *os.File) error {
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		pprof.Do(context.Background(), pprof.Labels("worker", "a"),
			func(context.Context) { spin(300 * time.Millisecond) })
		pprof.Do(context.Background(), pprof.Labels("worker", "b"),
			func(context.Context) { spin(300 * time.Millisecond) })
		pprof.StopCPUProfile()
		return nil
	})
	runtime.KeepAlive(kept)
}
