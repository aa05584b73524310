# A fiber and the main fiber taking turns on one thread, allocating (so that the GC runs,
# and GC.compact now and then moves objects): fiber_side runs in the fiber, main_side
# in the main fiber. Runs for ARGV[0] seconds.
def fiber_work(n)
  a = []
  n.times { |i| a << "s#{i}" }
  a.size
end

def fiber_side
  loop do
    fiber_work(2000)
    Fiber.yield 1
  end
end

def main_side
  x = 0
  3000.times { x += 1 }
  x
end

finish = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] ? ARGV[0].to_f : 1e9)
f = Fiber.new { fiber_side }
$stdout.write("ready\n")
$stdout.flush
k = 0
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
  f.resume
  main_side
  k += 1
  GC.start if (k % 50).zero?
  GC.compact if (k % 500).zero? && GC.respond_to?(:compact)
end
