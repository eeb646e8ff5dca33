/**
 * Syntax colours for the diff: @speed-highlight/core's registry-free
 * tokenizer over a side's whole text (so a comment or string that spans
 * lines is coloured as such), split into lines of typed pieces. Chosen on
 * measured grounds (docs/ui.md): the smallest bundle and the fastest on a
 * 5,000-line diff of the three measured. Its output is pieces of text,
 * never markup: the page puts them in text nodes.
 */
import bash from "@speed-highlight/core/languages/bash.js";
import c from "@speed-highlight/core/languages/c.js";
import css from "@speed-highlight/core/languages/css.js";
import diff from "@speed-highlight/core/languages/diff.js";
import docker from "@speed-highlight/core/languages/docker.js";
import go from "@speed-highlight/core/languages/go.js";
import html from "@speed-highlight/core/languages/html.js";
import ini from "@speed-highlight/core/languages/ini.js";
import java from "@speed-highlight/core/languages/java.js";
import js from "@speed-highlight/core/languages/js.js";
import jsdoc from "@speed-highlight/core/languages/jsdoc.js";
import json from "@speed-highlight/core/languages/json.js";
import lua from "@speed-highlight/core/languages/lua.js";
import make from "@speed-highlight/core/languages/make.js";
import md from "@speed-highlight/core/languages/md.js";
import py from "@speed-highlight/core/languages/py.js";
import regex from "@speed-highlight/core/languages/regex.js";
import rs from "@speed-highlight/core/languages/rs.js";
import sql from "@speed-highlight/core/languages/sql.js";
import todo from "@speed-highlight/core/languages/todo.js";
import toml from "@speed-highlight/core/languages/toml.js";
import ts from "@speed-highlight/core/languages/ts.js";
import xml from "@speed-highlight/core/languages/xml.js";
import yaml from "@speed-highlight/core/languages/yaml.js";
import { tokenizeWith } from "@speed-highlight/core/tokenize";

// biome-ignore lint/suspicious/noExplicitAny: the package's grammar type is not exported under a stable name
const LANGUAGES: Record<string, any> = { bash, c, css, diff, docker, go, html, ini, java, js, jsdoc, json, lua, make, md, py, regex, rs, sql, todo, toml, ts, xml, yaml };

const BY_EXT: Record<string, string> = {
  ts: "ts",
  tsx: "ts",
  mts: "ts",
  cts: "ts",
  js: "js",
  jsx: "js",
  mjs: "js",
  cjs: "js",
  json: "json",
  jsonc: "json",
  css: "css",
  scss: "css",
  html: "html",
  htm: "html",
  vue: "html",
  svelte: "html",
  xml: "xml",
  svg: "xml",
  py: "py",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  yml: "yaml",
  yaml: "yaml",
  md: "md",
  markdown: "md",
  go: "go",
  rs: "rs",
  java: "java",
  kt: "java",
  c: "c",
  h: "c",
  cc: "c",
  cpp: "c",
  hpp: "c",
  toml: "toml",
  sql: "sql",
  lua: "lua",
  ini: "ini",
  cfg: "ini",
  diff: "diff",
  patch: "diff",
};

/** The language of a path, by its name; null where none fits (shown plain). */
export function languageOf(path: string): string | null {
  const name = path.split("/").pop() ?? path;
  if (/^Dockerfile/.test(name)) return "docker";
  if (/^(GNU)?[Mm]akefile$/.test(name)) return "make";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? (BY_EXT[name.slice(dot + 1).toLowerCase()] ?? null) : null;
}

export interface Piece {
  text: string;
  /** The token's kind (kwd, str, cmnt, num, func, …); "" for plain text. */
  type: string;
}

/** Past this a side is shown plain: colours are not worth seconds of a locked page. */
const LIMIT = 1024 * 1024;

/** A text's lines as typed pieces (no newlines in them); null when it is not highlighted. */
export function highlightLines(text: string, lang: string | null): Piece[][] | null {
  if (lang === null || !LANGUAGES[lang] || text.length > LIMIT) return null;
  const lines: Piece[][] = [[]];
  tokenizeWith(
    text,
    lang,
    (str: string, type?: string) => {
      const parts = str.split("\n");
      parts.forEach((p, i) => {
        if (i > 0) lines.push([]);
        if (p) lines[lines.length - 1]!.push({ text: p, type: type ?? "" });
      });
    },
    { languages: LANGUAGES },
  );
  return lines;
}
