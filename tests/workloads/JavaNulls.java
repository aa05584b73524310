/* A JVM that lives on SIGSEGV: JIT-compiled code dereferences a field that is null one
 * time in 16, and HotSpot turns the fault of that implicit null check into a
 * NullPointerException. Runs for args[0] seconds, then prints how many calls it made and
 * how many ended in an NPE; the two must agree (calls / 16 NPEs), or a fault went astray. */
public class JavaNulls {
	static final class Box { int v; }

	static int read(Box b) { return b.v; }

	public static void main(String[] args) {
		long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
		Box[] boxes = new Box[16];
		for (int i = 1; i < 16; i++) { boxes[i] = new Box(); boxes[i].v = i; }
		long calls = 0, npes = 0, sum = 0;
		while (System.nanoTime() < end) {
			for (int i = 0; i < 16000; i++) {
				calls++;
				try {
					sum += read(boxes[i & 15]);
				} catch (NullPointerException e) {
					npes++;
				}
			}
		}
		System.out.println("calls " + calls + " npes " + npes + " ok " + (npes * 16 == calls) + " sum " + (sum > 0));
	}
}
