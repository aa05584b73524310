# Ruby calling into a C extension: squash spends its time in Zlib::Deflate.deflate,
# whose native frames (zlib's deflate) must show above squash's Ruby frame and its
# `deflate (cfunc)_[rb]` frame. Runs ARGV[0] seconds.
require 'zlib'

DATA_IN = (0...(256 * 4096)).map { |i| (i % 7).zero? ? (i * 31) & 0xff : i & 0xff }.pack('C*')

def squash
  Zlib::Deflate.deflate(DATA_IN, 9) # LINE:squash
end

finish = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] ? ARGV[0].to_f : 1e9)
$stdout.write("ready\n")
$stdout.flush
squash while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
