# Two Python threads, each spinning in its own function (thread_a -> spin_a,
# thread_b -> spin_b), while the main thread waits. Runs for argv[1] seconds.
import sys
import threading
import time

try:
    range = xrange  # noqa: F821 (2.7)
except NameError:
    pass

end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1e9)


def spin_a():
    x = 0
    while time.time() < end:
        for i in range(1000):
            x += i  # LINE:spin_a
    return x


def spin_b():
    x = 0
    while time.time() < end:
        for i in range(1000):
            x -= i  # LINE:spin_b
    return x


def thread_a():
    spin_a()


def thread_b():
    spin_b()


threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
for t in threads:
    t.start()
sys.stdout.write("ready\n")
sys.stdout.flush()
for t in threads:
    t.join()
