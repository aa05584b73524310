// Known-answer .NET workload for kiln's e2e tests: one managed thread spends CPU in
// Ratio.Work.Alpha and Ratio.Work.Beta 7:3 through a call chain (Main > Run > Phase >
// Alpha|Beta), in phases of 50 ms of the thread's own CPU time (clock_gettime), so the
// shares hold on a loaded machine (a window that gets 1 s of CPU sees 20 of them). Runs for
// argv[0] seconds (default 30), then exits. With a second argument N
// (bench/dotnet.sh) it does a fixed amount of work instead: N phases of 7 Spin calls in
// Alpha and 3 in Beta, then prints "done <wall seconds>".
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Ratio
{
	public static class Work
	{
		static volatile int sink;

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void Spin(int n)
		{
			int x = sink;
			for (int i = 0; i < n; i++)
				x = x * 1103515245 + 12345;
			sink = x;
		}

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void Alpha(TimeSpan cpu) { Burn(cpu); }

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void Beta(TimeSpan cpu) { Burn(cpu); }

		[StructLayout(LayoutKind.Sequential)]
		struct Timespec { public long sec; public long nsec; }

		[DllImport("libc", EntryPoint = "clock_gettime")]
		static extern int ClockGettime(int clock, out Timespec ts);

		/* CLOCK_THREAD_CPUTIME_ID: this thread's CPU time, to the nanosecond */
		static long ThreadCpuNs()
		{
			Timespec ts;
			ClockGettime(3, out ts);
			return ts.sec * 1000000000L + ts.nsec;
		}

		[MethodImpl(MethodImplOptions.NoInlining)]
		static void Burn(TimeSpan cpu)
		{
			long end = ThreadCpuNs() + cpu.Ticks * 100;
			while (ThreadCpuNs() < end)
				Spin(200000);
		}

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void Phase(int ms)
		{
			Alpha(TimeSpan.FromMilliseconds(ms * 7 / 10));
			Beta(TimeSpan.FromMilliseconds(ms * 3 / 10));
		}

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void Run(double seconds)
		{
			Stopwatch wall = Stopwatch.StartNew();
			while (wall.Elapsed.TotalSeconds < seconds)
				Phase(50);	/* short phases: a window of a loaded second sees many */
		}

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void AlphaN(int n) { for (int i = 0; i < n; i++) Spin(2000000); }

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void BetaN(int n) { for (int i = 0; i < n; i++) Spin(2000000); }

		public static void Main(string[] args)
		{
			if (args.Length > 1) {
				int phases = int.Parse(args[1]);
				Console.WriteLine("ready " + Process.GetCurrentProcess().Id);
				Stopwatch w = Stopwatch.StartNew();
				for (int i = 0; i < phases; i++) {
					AlphaN(7);
					BetaN(3);
				}
				Console.WriteLine("done " + w.Elapsed.TotalSeconds.ToString("F3"));
				return;
			}
			double seconds = args.Length > 0 ? double.Parse(args[0]) : 30;
			Console.WriteLine("ready " + Process.GetCurrentProcess().Id);
			Console.Out.Flush();
			Run(seconds);
		}
	}
}
