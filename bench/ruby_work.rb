# The benchmark's Ruby work: alpha/beta 70/30 through <main> -> dispatch (as
# tests/workloads/ruby_ratio.rb), a fixed number of rounds (ARGV[0]). Prints "ready",
# waits 1.5 s (for the profiler to attach), runs, and prints its wall and CPU seconds.
def alpha
  x = 0
  i = 0
  while i < 7000
    x += i * i
    i += 1
  end
  x
end

def beta
  x = 0
  i = 0
  while i < 3000
    x += i * i
    i += 1
  end
  x
end

def dispatch(which)
  which ? alpha : beta
end

rounds = ARGV[0].to_i
$stdout.write("ready\n")
$stdout.flush
sleep 1.5
wall = Process.clock_gettime(Process::CLOCK_MONOTONIC)
cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
rounds.times do
  dispatch(true)
  dispatch(false)
end
cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - cpu
$stdout.write(format("%.4f %.4f\n", Process.clock_gettime(Process::CLOCK_MONOTONIC) - wall, cpu))
$stdout.flush
