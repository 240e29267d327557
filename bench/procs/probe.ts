import { monitorEventLoopDelay } from 'node:perf_hooks';
import { now } from '../lib/clock.js';
import { serve, type Handlers } from '../lib/ipc.js';

/** What a worker process reports about one measured window. */
export interface ProbeReading {
  /** RSS (bytes) just before the window, after a full GC unless the window started without one. */
  rssBase: number;
  /** Highest RSS (bytes) sampled every 100 ms during the window. */
  rssPeak: number;
  eldP50Ms: number;
  eldP99Ms: number;
  eldMaxMs: number;
  /** CPU time (user + system, ms) the process used during the window. */
  cpuMs: number;
}

/** A full GC (the bench runs its processes with --expose-gc). */
const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();

/**
 * The commands every bench process answers: `clock` (for the driver's offset), `rss`,
 * `liveHeap`, and `probeStart`/`probeRead` around a measured window (RSS peak and event-loop delay).
 */
export function probeHandlers(): Handlers {
  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  let base = 0;
  let peak = 0;
  let timer: NodeJS.Timeout | undefined;
  let cpu = process.cpuUsage();
  const rss = () => process.memoryUsage.rss();
  return {
    clock: () => now(),
    rss: () => rss(),
    /** Heap in use (bytes) after a full GC: what the process really holds (BENCH_HEAP). */
    liveHeap: () => {
      collectGarbage();
      return process.memoryUsage().heapUsed;
    },
    /**
     * `{ collect: false }` skips the full GC that makes the RSS baseline: a window whose
     * messages are already flowing (latency) must not start with a pause the bench caused.
     */
    probeStart: (options?: { collect?: boolean }) => {
      if (options?.collect !== false) collectGarbage();
      clearInterval(timer);
      base = rss();
      peak = base;
      timer = setInterval(() => (peak = Math.max(peak, rss())), 100);
      eld.reset();
      cpu = process.cpuUsage();
      return base;
    },
    probeRead: (): ProbeReading => {
      const used = process.cpuUsage(cpu);
      clearInterval(timer);
      peak = Math.max(peak, rss());
      return { rssBase: base, rssPeak: peak, eldP50Ms: eld.percentile(50) / 1e6, eldP99Ms: eld.percentile(99) / 1e6, eldMaxMs: eld.max / 1e6, cpuMs: (used.user + used.system) / 1000 };
    },
  };
}

/** Exits shortly after the reply to `stop` went out. */
export function exitSoon(code = 0): void {
  setTimeout(() => process.exit(code), 50);
}

/** Answers the probe commands, and `stop`: runs `closers` one after the other, then exits. */
export function serveProbesUntilStop(...closers: Array<() => unknown>): void {
  serve({
    ...probeHandlers(),
    stop: async () => {
      for (const close of closers) await close();
      exitSoon();
    },
  });
}
