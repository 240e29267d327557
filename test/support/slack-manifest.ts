import { readFileSync } from 'node:fs';

/** One of `adapters/slack/`'s manifest files, as text. */
export function readSlackManifest(name: string): string {
  return readFileSync(new URL(`../../adapters/slack/${name}`, import.meta.url), 'utf8');
}

/** The YAML list items under `key:`, by indentation (enough for the Slack manifests). */
export function yamlListItems(yaml: string, key: string): string[] {
  const lines = yaml.split('\n');
  const start = lines.findIndex((l) => l.trim() === `${key}:`);
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    const m = /^\s+- ([^\s#]+)/.exec(l);
    if (!m) break;
    out.push(m[1]!);
  }
  return out;
}
