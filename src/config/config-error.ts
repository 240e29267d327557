/** A setting is missing or wrong. The message names the variable and how to fix it. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.length === 1 ? `Configuration error: ${problems[0]}` : `Configuration errors:\n- ${problems.join('\n- ')}`);
    this.name = 'ConfigError';
  }
}
