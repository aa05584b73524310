<?php
// Known-answer PHP workload: Work::alpha and beta share the CPU 70/30 through the call
// chain <main> -> dispatch -> alpha/beta, in phases of tens of milliseconds: kiln reads
// the PHP stack a little after the kernel took the sample, and on a loaded host several
// samples at once, which with short phases makes the samples' shares vary more than
// independent samples would. Runs for argv[1] seconds (default: forever). The LINE:
// markers let tests find the expected lines.

class Work
{
    public static function alpha()
    {
        $x = 0;
        for ($i = 0; $i < 3500000; $i++) {
            $x = ($x + $i) & 0xffffff; // LINE:alpha
        }
        return $x;
    }
}

function beta()
{
    $x = 0;
    for ($i = 0; $i < 1500000; $i++) {
        $x = ($x + $i) & 0xffffff; // LINE:beta
    }
    return $x;
}

function dispatch($which)
{
    if ($which) {
        return Work::alpha(); // LINE:dispatch-alpha
    }
    return beta(); // LINE:dispatch-beta
}

$end = microtime(true) + (isset($argv[1]) ? (float)$argv[1] : 1e9);
echo "ready\n";
while (microtime(true) < $end) {
    dispatch(true); // LINE:main-alpha
    dispatch(false); // LINE:main-beta
}
