// otlpq speaks OTLP profiles with the OpenTelemetry Collector's own data model
// (go.opentelemetry.io/collector/pdata/pprofile), for tests/e2e/server_otlp.sh and
// record_otlp.sh. Built at test time from the Go module proxy.
//
//	otlpq send URL          posts a known profile set (gzip protobuf) to URL
//	otlpq receive ADDR OUT  an OTLP/HTTP receiver: writes what each request holds to OUT
//
// The known set: service "otlpapp" (host h1, container id c0ffee, executable worker),
// CPU samples at 100 Hz: main;handle;parse 6 on thread t1, main;handle;render 4 on t2
// (render has inlined fmt.Sprintf), a kernel frame under parse in 2 of parse's samples,
// and a sample with 3 timestamps and no values on t1 (main;idle); plus a second resource
// without a service name whose executable is "batch": alloc_space bytes, main;grow 4096.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

type dict struct {
	d       pprofile.ProfilesDictionary
	strings map[string]int32
	funcs   map[string]int32
}

func (d *dict) str(s string) int32 {
	if i, ok := d.strings[s]; ok {
		return i
	}
	i := int32(d.d.StringTable().Len())
	d.d.StringTable().Append(s)
	d.strings[s] = i
	return i
}

func (d *dict) attr(key, value string) int32 {
	a := d.d.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(d.str(key))
	a.Value().SetStr(value)
	return int32(d.d.AttributeTable().Len() - 1)
}

func (d *dict) fn(name, file string) int32 {
	if i, ok := d.funcs[name]; ok {
		return i
	}
	f := d.d.FunctionTable().AppendEmpty()
	f.SetNameStrindex(d.str(name))
	f.SetFilenameStrindex(d.str(file))
	i := int32(d.d.FunctionTable().Len() - 1)
	d.funcs[name] = i
	return i
}

// loc adds a location whose lines are names, innermost first, of frame type typ.
func (d *dict) loc(typ int32, names ...string) int32 {
	l := d.d.LocationTable().AppendEmpty()
	for _, n := range names {
		ln := l.Lines().AppendEmpty()
		ln.SetFunctionIndex(d.fn(n, "main.go"))
		ln.SetLine(7)
	}
	l.AttributeIndices().Append(typ)
	return int32(d.d.LocationTable().Len() - 1)
}

// stack adds a stack of locations given root first (the wire wants the leaf first).
func (d *dict) stack(root ...int32) int32 {
	s := d.d.StackTable().AppendEmpty()
	for i := len(root) - 1; i >= 0; i-- {
		s.LocationIndices().Append(root[i])
	}
	return int32(d.d.StackTable().Len() - 1)
}

func build() pprofile.Profiles {
	pd := pprofile.NewProfiles()
	d := &dict{d: pd.Dictionary(), strings: map[string]int32{}, funcs: map[string]int32{}}
	d.str("")
	d.d.MappingTable().AppendEmpty()
	d.d.LocationTable().AppendEmpty()
	d.d.FunctionTable().AppendEmpty()
	d.d.LinkTable().AppendEmpty()
	d.d.AttributeTable().AppendEmpty()
	d.d.StackTable().AppendEmpty()
	native, kernel := d.attr("profile.frame.type", "native"), d.attr("profile.frame.type", "kernel")
	t1, t2 := d.attr("thread.name", "t1"), d.attr("thread.name", "t2")
	tid := d.attr("thread.id", "4242")
	mainL, handle := d.loc(native, "main"), d.loc(native, "handle")
	parse, render := d.loc(native, "parse"), d.loc(native, "fmt.Sprintf", "render")
	sys, idle := d.loc(kernel, "do_syscall_64"), d.loc(native, "idle")

	now := time.Now()
	rp := pd.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr("service.name", "otlpapp")
	rp.Resource().Attributes().PutStr("host.name", "h1")
	rp.Resource().Attributes().PutStr("container.id", "c0ffee")
	rp.Resource().Attributes().PutStr("process.executable.name", "worker")
	rp.Resource().Attributes().PutInt("process.pid", 4242)
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName("kiln-test")
	p := sp.Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(d.str("samples"))
	p.SampleType().SetUnitStrindex(d.str("count"))
	p.PeriodType().SetTypeStrindex(d.str("cpu"))
	p.PeriodType().SetUnitStrindex(d.str("nanoseconds"))
	p.SetPeriod(10000000)
	p.SetTime(pcommon.NewTimestampFromTime(now.Add(-20 * time.Second)))
	p.SetDurationNano(uint64(10 * time.Second))
	add := func(stack int32, value int64, attrs ...int32) pprofile.Sample {
		s := p.Samples().AppendEmpty()
		s.SetStackIndex(stack)
		if value > 0 {
			s.Values().Append(value)
		}
		for _, a := range attrs {
			s.AttributeIndices().Append(a)
		}
		return s
	}
	add(d.stack(mainL, handle, parse), 4, t1, tid)
	add(d.stack(mainL, handle, parse, sys), 2, t1, tid)
	add(d.stack(mainL, handle, render), 4, t2)
	ts := add(d.stack(mainL, idle), 0, t1)
	for i := 0; i < 3; i++ {
		ts.TimestampsUnixNano().Append(uint64(now.Add(-15 * time.Second).UnixNano()))
	}

	rp2 := pd.ResourceProfiles().AppendEmpty()
	rp2.Resource().Attributes().PutStr("process.executable.name", "batch")
	p2 := rp2.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p2.SampleType().SetTypeStrindex(d.str("alloc_space"))
	p2.SampleType().SetUnitStrindex(d.str("bytes"))
	p2.PeriodType().SetTypeStrindex(d.str("space"))
	p2.PeriodType().SetUnitStrindex(d.str("bytes"))
	p2.SetTime(pcommon.NewTimestampFromTime(now.Add(-20 * time.Second)))
	p2.SetDurationNano(uint64(10 * time.Second))
	s := p2.Samples().AppendEmpty()
	s.SetStackIndex(d.stack(mainL, d.loc(native, "grow")))
	s.Values().Append(4096)
	return pd
}

func send(url string) {
	req := pprofileotlp.NewExportRequestFromProfiles(build())
	body, err := req.MarshalProto()
	if err != nil {
		die(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(body)
	w.Close()
	hr, _ := http.NewRequest("POST", url, &gz)
	hr.Header.Set("Content-Type", "application/x-protobuf")
	hr.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		die(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		die(fmt.Errorf("HTTP %d: %s", resp.StatusCode, b))
	}
	r := pprofileotlp.NewExportResponse()
	if err := r.UnmarshalProto(b); err != nil {
		die(fmt.Errorf("the answer is not an ExportProfilesServiceResponse: %v", err))
	}
	fmt.Println("sent")
}

// describe writes one line per profile: its resource attributes, type, the sum of its
// values (timestamps count one each), and each stack root first with its value.
func describe(pd pprofile.Profiles, out io.Writer) {
	d := pd.Dictionary()
	st := d.StringTable()
	for i := 0; i < pd.ResourceProfiles().Len(); i++ {
		rp := pd.ResourceProfiles().At(i)
		var attrs []string
		rp.Resource().Attributes().Range(func(k string, v pcommon.Value) bool {
			attrs = append(attrs, k+"="+v.AsString())
			return true
		})
		sort.Strings(attrs)
		for j := 0; j < rp.ScopeProfiles().Len(); j++ {
			ps := rp.ScopeProfiles().At(j).Profiles()
			for k := 0; k < ps.Len(); k++ {
				p := ps.At(k)
				var total int64
				stacks := map[string]int64{}
				for s := 0; s < p.Samples().Len(); s++ {
					sm := p.Samples().At(s)
					var v int64
					for x := 0; x < sm.Values().Len(); x++ {
						v += sm.Values().At(x)
					}
					if sm.Values().Len() == 0 {
						v = int64(sm.TimestampsUnixNano().Len())
					}
					total += v
					li := d.StackTable().At(int(sm.StackIndex())).LocationIndices()
					var names []string
					for x := li.Len() - 1; x >= 0; x-- {
						loc := d.LocationTable().At(int(li.At(x)))
						for y := loc.Lines().Len() - 1; y >= 0; y-- {
							f := d.FunctionTable().At(int(loc.Lines().At(y).FunctionIndex()))
							names = append(names, st.At(int(f.NameStrindex())))
						}
					}
					stacks[strings.Join(names, ";")] += v
				}
				fmt.Fprintf(out, "profile {%s} %s/%s period %d total %d\n", strings.Join(attrs, ","),
					st.At(int(p.SampleType().TypeStrindex())), st.At(int(p.SampleType().UnitStrindex())),
					p.Period(), total)
				var keys []string
				for s := range stacks {
					keys = append(keys, s)
				}
				sort.Strings(keys)
				for _, s := range keys {
					fmt.Fprintf(out, "stack %s %d\n", s, stacks[s])
				}
			}
		}
	}
}

func receive(addr, outfile string) {
	f, err := os.Create(outfile)
	if err != nil {
		die(err)
	}
	http.HandleFunc("/v1development/profiles", func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			gz, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = gz
		}
		b, _ := io.ReadAll(body)
		req := pprofileotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			fmt.Fprintf(f, "bad request: %v\n", err)
			http.Error(w, err.Error(), 400)
			return
		}
		fmt.Fprintf(f, "request content-type %s\n", r.Header.Get("Content-Type"))
		describe(req.Profiles(), f)
		f.Sync()
		resp, _ := pprofileotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
	})
	die(http.ListenAndServe(addr, nil))
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "otlpq:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "send" {
		send(os.Args[2])
	} else if len(os.Args) >= 4 && os.Args[1] == "receive" {
		receive(os.Args[2], os.Args[3])
	} else if len(os.Args) >= 2 && os.Args[1] == "describe" {
		describe(build(), os.Stdout)
	} else {
		die(fmt.Errorf("usage: otlpq send URL | receive ADDR OUT | describe"))
	}
}
