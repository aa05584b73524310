<?php
// The benchmark's PHP work: Work::alpha / beta 70/30 through <main> -> dispatch (as
// tests/workloads/php_ratio.php), a fixed number of rounds (argv[1]). Prints "ready",
// waits 1.5 s (for the profiler to attach), runs, and prints its wall and CPU seconds.

class Work
{
    public static function alpha()
    {
        $x = 0;
        for ($i = 0; $i < 7000; $i++) {
            $x += $i * $i;
        }
        return $x;
    }
}

function beta()
{
    $x = 0;
    for ($i = 0; $i < 3000; $i++) {
        $x += $i * $i;
    }
    return $x;
}

function dispatch($which)
{
    return $which ? Work::alpha() : beta();
}

function cpu_seconds()
{
    $u = getrusage();
    return $u['ru_utime.tv_sec'] + $u['ru_utime.tv_usec'] / 1e6 +
           $u['ru_stime.tv_sec'] + $u['ru_stime.tv_usec'] / 1e6;
}

$rounds = (int)$argv[1];
echo "ready\n";
usleep(1500000);
$wall = microtime(true);
$cpu = cpu_seconds();
for ($r = 0; $r < $rounds; $r++) {
    dispatch(true);
    dispatch(false);
}
printf("%.3f %.3f\n", microtime(true) - $wall, cpu_seconds() - $cpu);
