# Known-answer Ruby workload: alpha and beta share the CPU 70/30 through the call chain
# <main> -> dispatch -> alpha/beta. Runs for ARGV[0] seconds (default: forever). The
# LINE: markers let tests find the expected lines. Each round's length is dithered (x1 to
# x2, the same factor for both) so that it cannot beat against the sampling timer's period.
def alpha(scale)
  x = 0
  i = 0
  while i < 70 * scale
    x = (x + i) & 0xffffff # LINE:alpha
    i += 1
  end
  x
end

def beta(scale)
  x = 0
  i = 0
  while i < 30 * scale
    x = (x + i) & 0xffffff # LINE:beta
    i += 1
  end
  x
end

def dispatch(which, scale)
  if which
    alpha(scale) # LINE:dispatch-alpha
  else
    beta(scale) # LINE:dispatch-beta
  end
end

finish = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] ? ARGV[0].to_f : 1e9)
$stdout.write("ready\n")
$stdout.flush
seed = 88172645463325252
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
  seed = (seed * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
  scale = 1000 + (seed >> 33) % 1000
  dispatch(true, scale) # LINE:main-alpha
  dispatch(false, scale) # LINE:main-beta
end
