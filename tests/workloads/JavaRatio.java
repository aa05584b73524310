// Known-answer Java workload: one busy thread ("kiln-busy-worker") runs
// Work.run -> Chain.outer -> Chain.middle -> {Chain.alpha, Chain.beta} -> Chain.spin,
// with alpha doing 3 units of spin for every 1 unit of beta: alpha holds 75% of the
// thread's CPU, beta 25%. Usage: java JavaRatio.java <seconds> [idle-seconds-first]
// Prints a result that does not depend on timing and exits with status 7, so that a
// test can check that profiling changes neither.
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

        static long alpha(long seed) {
            return spin(seed, 3 * UNIT);
        }

        static long beta(long seed) {
            return spin(seed, UNIT);
        }

        static long middle(long seed) {
            return alpha(seed) ^ beta(seed + 1);
        }

        static long outer(long seed) {
            return middle(seed);
        }
    }

    static final class Work implements Runnable {
        final long deadline;
        long result;
        long rounds;

        Work(long deadline) {
            this.deadline = deadline;
        }

        public void run() {
            while (System.nanoTime() < deadline || rounds == 0) {
                result = Chain.outer(42);
                rounds++;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        double idle = args.length > 1 ? Double.parseDouble(args[1]) : 0;
        if (idle > 0)
            Thread.sleep((long) (idle * 1000));
        Work w = new Work(System.nanoTime() + (long) (seconds * 1e9));
        Thread t = new Thread(w, "kiln-busy-worker");
        t.start();
        t.join();
        System.out.println("result " + Long.toHexString(w.result) + " ok=" + (w.rounds > 0));
        System.exit(7);
    }
}
