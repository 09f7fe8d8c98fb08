import { describe, expect, it } from 'vitest';
import { renderBlock, renderMarkdown, splitBlocks } from '../../../../../src/lib/chat/markdown.ts';

// No DOM here, so this checks the renderer layer alone (DOMPurify adds a second layer in the browser).
describe('renderMarkdown', () => {
  it('renders code, tables and lists', () => {
    const html = renderMarkdown('Intro\n\n```ts\nconst a = 1 < 2;\n```\n\n| svc | ok |\n|---|---|\n| api | yes |\n\n- one\n- two\n\n1. first');
    expect(html).toContain('<pre><code class="language-ts">const a = 1 &lt; 2;\n</code></pre>');
    expect(html).toMatch(/<table>[\s\S]*<th>svc<\/th>[\s\S]*<td>api<\/td>/);
    expect(html).toContain('<ul>\n<li>one</li>\n<li>two</li>\n</ul>');
    expect(html).toContain('<ol>\n<li>first</li>\n</ol>');
  });

  const attacks: [string, string][] = [
    ['script tag', '<script>alert(1)</script>'],
    ['inline handler', '<img src=x onerror="alert(1)">'],
    ['inline html inside text', 'hello <b onmouseover="alert(1)">bold</b> world'],
    ['iframe', '<iframe src="https://evil.example"></iframe>'],
    ['svg', '<svg onload=alert(1)></svg>'],
  ];
  for (const [name, source] of attacks) {
    it(`shows raw HTML as text: ${name}`, () => {
      const html = renderMarkdown(source);
      expect(html).not.toMatch(/<(script|img|iframe|svg|b)\b/i);
      expect(html).toContain('&#60;');
    });
  }

  it('drops javascript: and data: links but keeps their text', () => {
    const html = renderMarkdown('[click](javascript:alert(1)) and [data](data:text/html;base64,PHNjcmlwdD4=)');
    expect(html).not.toMatch(/href/);
    expect(html).toContain('click');
    expect(html).toContain('data');
  });

  it('keeps https links, opening safely in a new tab', () => {
    expect(renderMarkdown('[docs](https://example.com/a?b=1&c="2")')).toContain(
      '<a href="https://example.com/a?b=1&#38;c=&#34;2&#34;" target="_blank" rel="noopener noreferrer">docs</a>',
    );
  });

  it('does not load remote images from model output', () => {
    const html = renderMarkdown('![tracker](https://evil.example/pixel.png)');
    expect(html).not.toContain('<img');
    expect(html).toContain('tracker');
  });

  it('escapes HTML inside code spans', () => {
    expect(renderMarkdown('`<script>`')).toContain('<code>&lt;script&gt;</code>');
  });
});

describe('splitBlocks', () => {
  it('splits at blank lines and keeps fenced code (with its blank lines) in one block', () => {
    expect(splitBlocks('Intro line\n\n- a\n- b\n\n```sh\necho 1\n\necho 2\n```\n\n| a |\n|---|\n| 1 |\n\n\nTail')).toEqual([
      'Intro line',
      '- a\n- b',
      '```sh\necho 1\n\necho 2\n```',
      '| a |\n|---|\n| 1 |',
      'Tail',
    ]);
  });
  it('an unfinished fence keeps the rest of a streaming answer in its block', () => {
    expect(splitBlocks('Run:\n\n```\nline 1\n\nline 2')).toEqual(['Run:', '```\nline 1\n\nline 2']);
  });
  it('rendering block by block gives the same HTML as rendering the whole answer', () => {
    const source = 'Intro\n\n- a\n- b\n\n```ts\nconst x = 1;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nEnd **bold**.';
    expect(splitBlocks(source).map(renderBlock).join('')).toBe(renderMarkdown(source));
  });
});
