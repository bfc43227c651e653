import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { catalogOf } from '../../config/catalog.js';
import { ConfigError, defaultConfig, loadConfigFile, parseConfig } from '../../config/config-file.js';
import { discoverSkills } from '../../config/skills.js';
import { BUILTIN_TOOL_NAMES } from '../../core/resources/builtin-tools.js';

/** The catalog as the daemon builds it at startup: the home's config file and its discovered skills. */
const loadCatalog = (home: string) =>
  catalogOf(
    loadConfigFile(home),
    discoverSkills(home).skills.map((skill) => skill.name),
  );

t.test('an empty home reserves the built-in tools and the mcp_ namespace only', async (t) => {
  const catalog = loadCatalog(t.testdir());
  for (const name of BUILTIN_TOOL_NAMES) t.equal(catalog.reservation(name), 'builtin_tool', name);
  t.equal(catalog.reservation('Read_File'), 'builtin_tool', 'built-in names fold case');
  t.equal(catalog.reservation('mcp_anything'), 'mcp');
  t.equal(catalog.reservation('MCP_Other'), 'mcp');
  t.equal(catalog.reservation('lookup_order'), null);
});

t.test('discovered skills are reserved, disabled ones included', async (t) => {
  const home = t.testdir({
    skills: {
      review: { 'SKILL.md': 'x' },
      Deploy: { 'SKILL.md': 'x' },
      draft: {},
      collection: { skills: { 'Cloned-One': { 'SKILL.md': 'x' } } },
    },
    'config.json': JSON.stringify({ skills: { disabled: ['review'] } }),
  });
  const catalog = loadCatalog(home);
  t.equal(catalog.reservation('deploy'), 'discovered_skill', 'folder names fold case');
  t.equal(catalog.reservation('review'), 'discovered_skill', 'a disabled skill keeps its name reserved');
  t.equal(catalog.reservation('draft'), null, 'a folder without SKILL.md is not a skill');
  t.equal(
    catalog.reservation('cloned-one'),
    'discovered_skill',
    'a cloned collection’s skill, by its folder',
  );
  t.equal(catalog.reservation('collection'), null, 'the collection is no skill');
});

t.test('configured disabled skill and tool names are reserved case-insensitively', async (t) => {
  const home = t.testdir({
    'config.json': JSON.stringify({
      skills: { disabled: ['Old_Skill'] },
      tools: { disabled: ['LEGACY_TOOL', 'web_fetch'] },
    }),
  });
  const catalog = loadCatalog(home);
  t.equal(catalog.reservation('old_skill'), 'disabled_name');
  t.equal(catalog.reservation('OLD_SKILL'), 'disabled_name');
  t.equal(catalog.reservation('legacy_tool'), 'disabled_name');
  t.equal(catalog.reservation('web_fetch'), 'builtin_tool', 'a disabled built-in stays a built-in name');
  t.throws(() => catalog.assertAvailable('legacy_tool'), { code: 'conflict' });
  t.doesNotThrow(() => catalog.assertAvailable('fresh_name'));
});

t.test('an invalid config file stops the catalog from loading', async (t) => {
  const home = t.testdir();
  writeFileSync(join(home, 'config.json'), '{"tools":{"disabled":[1]}}');
  t.throws(() => loadCatalog(home), ConfigError);
});

t.test('catalogOf combines a loaded config with the discovered skills', async (t) => {
  const catalog = catalogOf(parseConfig('{"tools":{"disabled":["gone"]},"x":1}'), ['Notes']);
  t.equal(catalog.reservation('notes'), 'discovered_skill');
  t.equal(catalog.reservation('gone'), 'disabled_name');
  t.equal(catalogOf(defaultConfig(), []).reservation('notes'), null);
});
