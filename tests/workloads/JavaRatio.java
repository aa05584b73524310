// Known-answer Java workload: one busy thread ("kiln-busy-worker") runs
// Work.run -> Chain.outer -> Chain.middle -> {Chain.alpha, Chain.beta} -> Chain.spin,
// with alpha doing 3 units of spin for every 1 unit of beta: alpha holds 75% of the
// thread's CPU, beta 25%. Usage: java JavaRatio.java <seconds> [idle-seconds-first]
// Each round's length is dithered (x2/3 to x4/3 of 4 units, the same factor for alpha and
// beta) so that it cannot beat against the sampling timer's fixed period, as the C, Go,
// Python and Ruby workloads' rounds are (see deep.c). Prints a result that does not
// depend on timing (the first round's) and exits with status 7, so that a test can check
// that profiling changes neither.
public class JavaRatio {
    static final int UNIT = 200_000;

    static final class Chain {
        static long spin(long seed, int n) {
            long x = seed;
            for (int i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            return x;
        }

        static long alpha(long seed, int unit) {
            return spin(seed, 3 * unit);
        }

        static long beta(long seed, int unit) {
            return spin(seed, unit);
        }

        static long middle(long seed, int unit) {
            return alpha(seed, unit) ^ beta(seed + 1, unit);
        }

        static long outer(long seed, int unit) {
            return middle(seed, unit);
        }
    }

    static final class Work implements Runnable {
        final long deadline;
        final long maxRounds;
        long result;
        long rounds;
        long wallNs, cpuNs;
        long dither = 88172645463325252L;	// xorshift64

        // this round's unit: UNIT on average, from 2/3 to 4/3 of it
        int unit() {
            dither ^= dither << 13;
            dither ^= dither >>> 7;
            dither ^= dither << 17;
            return (int) ((long) UNIT * (1000 + Long.remainderUnsigned(dither, 1000)) / 1500);
        }

        Work(long deadline, long maxRounds) {
            this.deadline = deadline;
            this.maxRounds = maxRounds;
        }

        public void run() {
            java.lang.management.ThreadMXBean mx =
                java.lang.management.ManagementFactory.getThreadMXBean();
            long w0 = System.nanoTime(), c0 = mx.getCurrentThreadCpuTime();
            while (maxRounds > 0 ? rounds < maxRounds
                                 : System.nanoTime() < deadline || rounds == 0) {
                long r = Chain.outer(42, unit());
                if (rounds++ == 0)
                    result = r;
            }
            wallNs = System.nanoTime() - w0;
            cpuNs = mx.getCurrentThreadCpuTime() - c0;
        }
    }

    public static void main(String[] args) throws Exception {
        boolean fixed = args.length > 0 && args[0].startsWith("rounds=");
        long maxRounds = fixed ? Long.parseLong(args[0].substring(7)) : 0;
        double seconds = args.length > 0 && !fixed ? Double.parseDouble(args[0]) : 5;
        double idle = args.length > 1 ? Double.parseDouble(args[1]) : 0;
        if (idle > 0)
            Thread.sleep((long) (idle * 1000));
        Work w = new Work(System.nanoTime() + (long) (seconds * 1e9), maxRounds);
        Thread t = new Thread(w, "kiln-busy-worker");
        t.start();
        t.join();
        System.out.println("result " + Long.toHexString(w.result) + " ok=" + (w.rounds > 0));
        if (fixed)
            System.err.println("work_ms=" + w.wallNs / 1000000 + " cpu_ms=" + w.cpuNs / 1000000);
        System.exit(7);
    }
}
