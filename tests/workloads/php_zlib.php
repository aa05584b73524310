<?php
// PHP calling into native code: squash() spends its time in gzcompress (zlib), and
// via_map() runs the callback spin() from array_map (a second execute_ex under the
// internal function). Each phase lasts about 0.1 s, so that few samples fall on a switch
// (kiln reads the PHP stack a little after the kernel took the native one). Runs for
// argv[1] seconds (default: forever).

function squash($data)
{
    $n = 0;
    $until = microtime(true) + 0.1;
    while (microtime(true) < $until) {
        $n += strlen(gzcompress($data, 9)); // LINE:squash
    }
    return $n;
}

function spin($n)
{
    $x = 0;
    for ($i = 0; $i < 20000; $i++) {
        $x = ($x + $i * $n) & 0xffff; // LINE:spin
    }
    return $x;
}

function via_map()
{
    return array_sum(array_map('spin', range(1, 60))); // LINE:via_map
}

mt_srand(42);
$data = '';
for ($i = 0; $i < 200000; $i++) {
    $data .= chr(mt_rand(0, 15) + 65);
}
$end = microtime(true) + (isset($argv[1]) ? (float)$argv[1] : 1e9);
echo "ready\n";
while (microtime(true) < $end) {
    squash($data);
    via_map();
}
