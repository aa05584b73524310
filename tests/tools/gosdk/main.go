// gosdk is a Go service profiled by Grafana's Pyroscope Go SDK (github.com/grafana/pyroscope-go,
// from the Go module proxy at test time), pushing to a kiln server: CPU, the four heap
// types, goroutines, mutex and block profiles, every 2 s, for tests/e2e/server_pyroscope_go.sh.
//
//	gosdk URL APP SECONDS
//
// The CPU work is known: main.alpha and main.beta do 7:3 of the same work, each under its own
// TagWrapper label handler=alpha|beta; 40 goroutines wait in park(); allocations are
// made in grow().
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/grafana/pyroscope-go"
)

var sink []byte

// spin does n units of work: CPU time, not wall time, is what the shares are about, so
// the 7:3 holds however busy the machine is.
//
//go:noinline
func spin(n int) {
	x := uint64(1)
	for i := 0; i < n*1000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 42 {
		fmt.Println(x)
	}
}

// dither is the state of unit's xorshift64.
var dither uint64 = 88172645463325252

// unit is one round's length: 1000 units on average, 2/3 to 4/3 of that, the same for
// alpha and beta. A round takes about the SDK's 100 Hz sampling period, and a fixed
// length could beat against it; so it is dithered, as the other known-answer workloads'
// rounds are (tests/workloads/ratio.c).
func unit() int {
	dither ^= dither << 13
	dither ^= dither >> 7
	dither ^= dither << 17
	return int(1000+dither%1000) * 2 / 3
}

//go:noinline
func alpha(u int) { spin(7 * u) }

//go:noinline
func beta(u int) { spin(3 * u) }

//go:noinline
func grow() { sink = make([]byte, 64<<10) }

//go:noinline
func park(wg *sync.WaitGroup, stop chan struct{}) {
	defer wg.Done()
	<-stop
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gosdk URL APP SECONDS")
		os.Exit(2)
	}
	secs, _ := strconv.Atoi(os.Args[3])
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(5)
	p, err := pyroscope.Start(pyroscope.Config{
		ApplicationName: os.Args[2],
		ServerAddress:   os.Args[1],
		Tags:            map[string]string{"region": "e2e"},
		UploadRate:      2 * time.Second,
		ProfileTypes: []pyroscope.ProfileType{
			pyroscope.ProfileCPU, pyroscope.ProfileAllocObjects, pyroscope.ProfileAllocSpace,
			pyroscope.ProfileInuseObjects, pyroscope.ProfileInuseSpace,
			pyroscope.ProfileGoroutines, pyroscope.ProfileMutexCount,
			pyroscope.ProfileBlockCount,
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gosdk:", err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go park(&wg, stop)
	}
	end := time.Now().Add(time.Duration(secs) * time.Second)
	ctx := context.Background()
	for time.Now().Before(end) {
		u := unit()
		pyroscope.TagWrapper(ctx, pyroscope.Labels("handler", "alpha"), func(context.Context) { alpha(u) })
		pyroscope.TagWrapper(ctx, pyroscope.Labels("handler", "beta"), func(context.Context) { beta(u) })
		grow()
	}
	close(stop)
	wg.Wait()
	if err := p.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk: stop:", err)
		os.Exit(1)
	}
	fmt.Println("done")
}
