// Known-answer workload for Go symbols: built stripped (-ldflags='-s -w'), so only
// .gopclntab can name main.alpha and main.beta. Runs os.Args[1] seconds.
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func alpha(n int) {
	x := sink
	for i := 0; i < n; i++ {
		x = x*2862933555777941757 + 3037000493
	}
	sink = x
}

//go:noinline
func beta(n int) {
	x := sink
	for i := 0; i < n; i++ {
		x = x*2862933555777941757 + 3037000493
	}
	sink = x
}

func main() {
	secs := 10
	if len(os.Args) > 1 {
		secs, _ = strconv.Atoi(os.Args[1])
	}
	end := time.Now().Add(time.Duration(secs) * time.Second)
	for time.Now().Before(end) {
		alpha(3000000)
		beta(1000000)
	}
}
