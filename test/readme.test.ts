import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DEMO_ADMIN_KEY, DEMO_EU_KEY, DEMO_KEY } from '../loaders/demo/keys.js';
import { optionsMarkdownTable } from '../src/cli/usage.js';
import { serveOptionRows } from '../src/config/serve-config.js';

describe('README tells the truth', () => {
  it('its configuration table is the serve schema, option for option', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(optionsMarkdownTable(serveOptionRows()).trim());
  });

  it('names the demo keys that the demo really accepts', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    for (const key of [DEMO_KEY, DEMO_EU_KEY, DEMO_ADMIN_KEY]) expect(readme).toContain(key);
  });
});
