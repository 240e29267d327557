/**
 * Which files are worth sending to the agent as text. Decided from the mimetype the platform
 * reports and, when that is missing or generic (`application/octet-stream`, Slack's `text/plain`
 * for everything it does not know), from the file name's extension.
 */

/** Mimetypes outside `text/*` whose content is text. */
const TEXT_MIMETYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/x-ndjson',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/javascript',
  'application/x-javascript',
  'application/typescript',
  'application/x-sh',
  'application/x-shellscript',
  'application/sql',
  'application/graphql',
  'application/x-httpd-php',
  'application/x-python',
  'application/csv',
]);

/** Extensions of text formats: data, docs, and source code. */
const TEXT_EXTENSIONS = new Set(
  (
    'txt text log md markdown rst adoc csv tsv json jsonl ndjson yaml yml toml ini cfg conf env properties xml html htm css scss less svg ' +
    'js mjs cjs jsx ts tsx mts cts py rb go rs java kt kts scala swift c h cc cpp cxx hpp hh cs fs php pl pm lua r sql sh bash zsh fish ps1 bat cmd ' +
    'dart ex exs erl hrl elm hs clj cljs edn groovy gradle tf hcl proto graphql gql vue svelte diff patch tex bib makefile dockerfile gitignore'
  ).split(' '),
);

/** Slack and browsers label unknown files with these; they say nothing about the content. */
const GENERIC_MIMETYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/** The part of a file name after its last dot, lower case (`Makefile` → `makefile`). */
export function extensionOf(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return (dot >= 0 ? base.slice(dot + 1) : base).toLowerCase();
}

/**
 * True for text/*, JSON, CSV, Markdown, YAML, XML and source code. Images, audio, video, PDF,
 * archives and office documents are not text-like even when their name says otherwise.
 */
export function isTextLike(file: { name: string; mimetype?: string }): boolean {
  const mime = (file.mimetype ?? '').split(';')[0]!.trim().toLowerCase();
  if (/^(image|audio|video|font)\//.test(mime)) return false;
  if (mime === 'application/pdf' || /zip|compressed|tar|gzip|msword|officedocument|opendocument/.test(mime)) return false;
  if (mime.startsWith('text/') || TEXT_MIMETYPES.has(mime) || /\+(json|xml)$/.test(mime)) return true;
  if (GENERIC_MIMETYPES.has(mime)) return TEXT_EXTENSIONS.has(extensionOf(file.name));
  return false;
}
