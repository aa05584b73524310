# Two Ruby threads, each spinning in its own method (thread_a -> spin_a, thread_b ->
# spin_b), while the main thread waits in join. Runs for ARGV[0] seconds.
FINISH = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] ? ARGV[0].to_f : 1e9)

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

def spin_a
  x = 0
  while now < FINISH
    i = 0
    while i < 1000
      x += i # LINE:spin_a
      i += 1
    end
  end
  x
end

def spin_b
  x = 0
  while now < FINISH
    i = 0
    while i < 1000
      x -= i # LINE:spin_b
      i += 1
    end
  end
  x
end

def thread_a
  spin_a
end

def thread_b
  spin_b
end

threads = [Thread.new { thread_a }, Thread.new { thread_b }]
$stdout.write("ready\n")
$stdout.flush
threads.each(&:join)
