# Python calling into a C extension: squash() spends its time in zlib.compress, whose
# native frames (zlib's deflate) must show above squash's Python frame. Runs argv[1] s.
import sys
import time
import zlib

data = bytearray(range(256)) * 4096
for i in range(0, len(data), 7):
    data[i] = (i * 31) & 0xff
data = bytes(data)


def squash():
    return zlib.compress(data, 9)  # LINE:squash


end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1e9)
sys.stdout.write("ready\n")
sys.stdout.flush()
while time.time() < end:
    squash()
