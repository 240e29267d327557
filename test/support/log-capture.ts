import { Writable } from 'node:stream';

/** Log lines captured in memory, for assertions. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
  /** The lines (parsed; an unreadable one as `{}`) whose `msg` matches. */
  matching(msg: RegExp): Array<Record<string, unknown>> {
    return this.lines
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>;
        } catch {
          return {};
        }
      })
      .filter((l) => typeof l.msg === 'string' && msg.test(l.msg));
  }
}
