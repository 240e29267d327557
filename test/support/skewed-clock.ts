/**
 * Imported first by a test's child process: with CLOCK_SKEW_MS set, `Date.now` in the whole
 * process is that far off the real time (a host without NTP, a VM resumed from pause), as
 * clock-skew.test.ts fakes it in-process. Must run before anything reads the clock.
 */
const skewMs = Number(process.env.CLOCK_SKEW_MS ?? 0);
if (skewMs) {
  const real = Date.now.bind(Date);
  Date.now = () => real() + skewMs;
}
