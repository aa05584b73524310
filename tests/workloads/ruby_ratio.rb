# Known-answer Ruby workload: alpha and beta share the CPU 70/30 through the call chain
# <main> -> dispatch -> alpha/beta. Runs for ARGV[0] seconds (default: forever). The
# LINE: markers let tests find the expected lines.
def alpha
  x = 0
  i = 0
  while i < 70_000
    x = (x + i) & 0xffffff # LINE:alpha
    i += 1
  end
  x
end

def beta
  x = 0
  i = 0
  while i < 30_000
    x = (x + i) & 0xffffff # LINE:beta
    i += 1
  end
  x
end

def dispatch(which)
  if which
    alpha # LINE:dispatch-alpha
  else
    beta # LINE:dispatch-beta
  end
end

finish = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] ? ARGV[0].to_f : 1e9)
$stdout.write("ready\n")
$stdout.flush
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
  dispatch(true) # LINE:main-alpha
  dispatch(false) # LINE:main-beta
end
