import { describe, expect, it } from 'vitest';
import { localEmbedder } from '../../../../server/agent/embedder.ts';
import { keywordScore, rankExternalTools } from '../../../../server/agent/select-external.ts';

const fs = [
  { name: 'filesystem_read_text_file', description: 'Read the complete contents of a file from the file system as text.' },
  { name: 'filesystem_write_file', description: 'Create a new file or completely overwrite an existing file with new content.' },
  { name: 'filesystem_list_directory', description: 'Get a detailed listing of all files and directories in a specified path.' },
  { name: 'filesystem_move_file', description: 'Move or rename files and directories.' },
];

describe('rankExternalTools — MCP tools are always candidates, top N offered', () => {
  const rows: Array<[query: string, topN: number, first: string]> = [
    ['read the file /srv/notes/readme.txt', 2, 'filesystem_read_text_file'],
    ['write hello to /srv/notes/notes.txt', 2, 'filesystem_write_file'],
    ['list the directory /srv/notes', 2, 'filesystem_list_directory'],
  ];
  it.each(rows)('%s -> %s first', async (query, topN, first) => {
    const names = await rankExternalTools(query, fs, topN, localEmbedder);
    expect(names[0]).toBe(first);
    expect(names.length).toBeLessThanOrEqual(topN);
  });

  it('a server with 50 tools offers only the top N', async () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ name: `big_read_thing_${i}`, description: `Read thing number ${i}` }));
    expect(await rankExternalTools('read thing 7', many, 5, localEmbedder)).toHaveLength(5);
  });

  it('unrelated requests and top N 0 offer none', async () => {
    expect(await rankExternalTools('deploy checkout-api 2.4.1 to staging', fs, 5)).toEqual([]);
    expect(await rankExternalTools('read the file /x', fs, 0, localEmbedder)).toEqual([]);
  });

  it('embedding failure falls back to keywords', async () => {
    const broken = async () => Promise.reject(new Error('down'));
    expect((await rankExternalTools('read the file /x', fs, 1, broken))[0]).toBe('filesystem_read_text_file');
  });

  it('keywordScore is the share of query words the tool mentions', () => {
    expect(keywordScore('read file', fs[0])).toBe(1);
    expect(keywordScore('deploy service', fs[0])).toBe(0);
  });
});
