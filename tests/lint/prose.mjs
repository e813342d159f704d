#!/usr/bin/env node
// prose.mjs - sentence statistics of a Markdown file.
//
// Usage: node tests/lint/prose.mjs [--check] [FILE]   (FILE: README.md)
//
// Prints the number of sentences, the median and p90 words per sentence,
// the longest sentence and the longest table cell.  With --check it exits 1
// and lists the offenders when p90 is over 30 words, a sentence is over 60
// words or a table cell is over 40 words; it exits 0 otherwise.
//
// What counts as prose:
// - Fenced code blocks, HTML comments and headings are left out.
// - An inline code span counts as one word, whatever it holds.
// - A link counts as its text; emphasis marks and link definitions
//   ("[name]: url") are dropped.
// - A paragraph, a list item and a table cell are each split into
//   sentences; a table cell is also measured whole.  A cell of fewer than
//   LABEL_WORDS words is a label (a key, a default), measured as a cell only.
//   The separator row of a table is left out; its header row counts.
// - A sentence ends at ".", "!" or "?" followed by a space, except after
//   "e.g.", "i.e.", "etc.", "vs." and "cf.".
// - A word is a run of non-space characters holding a letter or a digit.
import { readFileSync } from 'node:fs';

const LIMITS = { p90: 30, sentence: 60, cell: 40 };
const LABEL_WORDS = 4;
const ABBREVIATIONS = new Set(['e.g.', 'i.e.', 'etc.', 'vs.', 'cf.']);

// Returns the file's lines without fenced code blocks and HTML comments.
function prose_lines(text) {
	const out = [];
	let fence = null;
	let comment = false;

	for (const line of text.split('\n')) {
		const trimmed = line.trim();
		const opens = trimmed.match(/^(```|~~~)/);

		if (fence) {
			if (trimmed.startsWith(fence))
				fence = null;
			out.push('');
			continue;
		}
		if (opens) {
			fence = opens[1];
			out.push('');
			continue;
		}
		if (comment || trimmed.startsWith('<!--')) {
			comment = !trimmed.includes('-->');
			out.push('');
			continue;
		}
		out.push(line);
	}
	return out;
}

// Replaces inline code, links and emphasis by plain words.
function plain(text) {
	return text
		.replace(/`[^`]*`/g, 'CODE')
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
		.replace(/\*\*|__/g, '')
		.replace(/(^|\s)[*_]([^*_]+)[*_]/g, '$1$2');
}

function words_of(text) {
	return text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

// Splits a block of plain text into sentences.
function sentences_of(text) {
	const out = [];
	const tokens = text.split(/\s+/).filter((t) => t.length > 0);
	let current = [];

	for (const token of tokens) {
		current.push(token);
		const ends = /[.!?]["')\]]*$/.test(token);
		if (ends && !ABBREVIATIONS.has(token.toLowerCase())) {
			out.push(current.join(' '));
			current = [];
		}
	}
	if (current.length > 0)
		out.push(current.join(' '));
	return out.filter((s) => words_of(s) > 0);
}

function table_cells(line) {
	let row = line.trim();

	if (row.startsWith('|'))
		row = row.slice(1);
	if (row.endsWith('|'))
		row = row.slice(0, -1);
	// A "|" inside a code span is no separator.
	const cells = [];
	let cell = '';
	let code = false;
	for (const ch of row) {
		if (ch === '`')
			code = !code;
		if (ch === '|' && !code) {
			cells.push(cell);
			cell = '';
			continue;
		}
		cell += ch;
	}
	cells.push(cell);
	return cells.map((c) => c.trim());
}

const LINK_DEFINITION = /^\[[^\]]+\]:\s/;
const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+/;

// Returns { blocks: [text], cells: [text] } of the file's prose.
function blocks_of(lines) {
	const blocks = [];
	const cells = [];
	let current = null;
	const flush = () => {
		if (current !== null && current.trim() !== '')
			blocks.push(current);
		current = null;
	};

	for (const line of lines) {
		const trimmed = line.trim();

		if (trimmed === '' || /^#{1,6}\s/.test(trimmed) || LINK_DEFINITION.test(trimmed)) {
			flush();
			continue;
		}
		if (trimmed.startsWith('|')) {
			flush();
			if (/^\|?[\s:|-]+\|?$/.test(trimmed))
				continue; /* the separator row */
			for (const cell of table_cells(trimmed)) {
				if (cell !== '')
					cells.push(cell);
			}
			continue;
		}
		if (LIST_ITEM.test(line)) {
			flush();
			current = line.replace(LIST_ITEM, '');
			continue;
		}
		current = current === null ? trimmed : current + ' ' + trimmed;
	}
	flush();
	return { blocks, cells };
}

function percentile(sorted, p) {
	if (sorted.length === 0)
		return 0;
	const rank = Math.ceil((p / 100) * sorted.length);
	return sorted[Math.max(0, rank - 1)];
}

function median(sorted) {
	const n = sorted.length;
	if (n === 0)
		return 0;
	return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

function measure(text) {
	const { blocks, cells } = blocks_of(prose_lines(text));
	const sentences = [];

	const measured_cells = cells.map((c) => ({ text: c, words: words_of(plain(c)) }));
	const prose_cells = measured_cells.filter((c) => c.words >= LABEL_WORDS).map((c) => c.text);

	for (const block of blocks.concat(prose_cells))
		for (const s of sentences_of(plain(block)))
			sentences.push({ text: s, words: words_of(s) });
	const counts = sentences.map((s) => s.words).sort((a, b) => a - b);
	const by_words = (a, b) => b.words - a.words;
	return {
		sentences,
		cells: measured_cells,
		median: median(counts),
		p90: percentile(counts, 90),
		longest: sentences.slice().sort(by_words)[0] || { text: '', words: 0 },
		longest_cell: measured_cells.slice().sort(by_words)[0] || { text: '', words: 0 },
	};
}

function report(file, m) {
	console.log(`${file}:`);
	console.log(`  sentences          ${m.sentences.length}`);
	console.log(`  words per sentence median ${m.median}, p90 ${m.p90}`);
	console.log(`  longest sentence   ${m.longest.words} words: ${m.longest.text}`);
	console.log(`  longest table cell ${m.longest_cell.words} words: ${m.longest_cell.text}`);
}

// Prints what breaks the limits; returns how many things do.
function check(m) {
	let failures = 0;

	if (m.p90 > LIMITS.p90) {
		console.log(`FAIL p90 is ${m.p90} words (at most ${LIMITS.p90})`);
		failures++;
	}
	for (const s of m.sentences) {
		if (s.words > LIMITS.sentence) {
			console.log(`FAIL sentence of ${s.words} words (at most ${LIMITS.sentence}): ${s.text}`);
			failures++;
		}
	}
	for (const c of m.cells) {
		if (c.words > LIMITS.cell) {
			console.log(`FAIL table cell of ${c.words} words (at most ${LIMITS.cell}): ${c.text}`);
			failures++;
		}
	}
	return failures;
}

function main(argv) {
	const args = argv.slice(2);
	const checking = args.includes('--check');
	const files = args.filter((a) => a !== '--check');
	const file = files[0] || 'README.md';
	const m = measure(readFileSync(file, 'utf8'));

	report(file, m);
	if (checking && check(m) > 0)
		process.exit(1);
}

main(process.argv);
