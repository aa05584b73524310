// Known-answer Go workload for the native unwinder: main.main -> rec x30 -> leaf.
// Go keeps frame pointers and has no .eh_frame: smart mode walks it by frame pointers.
//
//	unwind_go [SECONDS]   spin for SECONDS (default 20)
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func leaf() {
	for i := uint64(0); i < 1000000; i++ {
		sink += i * i
	}
}

//go:noinline
func rec(n int) {
	if n > 1 {
		rec(n - 1)
		sink++
		return
	}
	leaf()
}

func main() {
	secs := 20.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		rec(30)
	}
}
