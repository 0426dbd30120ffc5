import { describe, expect, it } from 'vitest';
import { BUILTIN_CATALOG } from '../src/catalog/builtin.js';
import { Catalog } from '../src/catalog/catalog.js';
import { DatasetSelection } from '../src/catalog/dataset-selection.js';

describe('--datasets selection', () => {
  it('all: the nine named datasets', () => {
    expect(DatasetSelection.all().list()).toHaveLength(9);
    expect(DatasetSelection.all().text).toBe('*/*');
  });

  it('a product glob, an exact dataset and a prefix, joined', () => {
    const s = DatasetSelection.parse('gbsi_us/*, pemi/grid_stress,w*/*');
    expect(s.list()).toEqual([
      'gbsi_us/system_stress',
      'gbsi_us/balance_momentum',
      'gbsi_us/storage_surprise',
      'gbsi_us/backtest_summary',
      'pemi/grid_stress',
      'wrsi/forecast_stress',
      'wssi_us/demand_shock',
    ]);
    expect(s.has('pemi', 'grid_stress')).toBe(true);
    expect(s.has('glmi', 'marginality')).toBe(false);
    expect(s.text).toBe('gbsi_us/*,pemi/grid_stress,w*/*');
  });

  it('*/system_stress selects that dataset of every product', () => {
    expect(DatasetSelection.parse('*/system_stress').list()).toEqual(['gbsi_us/system_stress', 'gbsi_eu/system_stress']);
  });

  it('refuses malformed patterns, naming them; a pattern matching nothing yet is accepted (its dataset may come with a later catalog)', () => {
    expect(() => DatasetSelection.parse('gbsi_us')).toThrow(/"gbsi_us" is not product\/dataset/);
    expect(() => DatasetSelection.parse('gbsi_us/')).toThrow(/is not product\/dataset/);
    expect(() => DatasetSelection.parse('g*s/*')).toThrow(/is not product\/dataset/);
    const later = DatasetSelection.parse('pemi/grid,acme/*');
    expect(later.list()).toEqual([]);
    expect(later.unmatched(BUILTIN_CATALOG)).toEqual(['pemi/grid', 'acme/*']);
    const acme = new Catalog([{ id: 'acme', name: 'Acme', floor: null, filters: [], datasets: [{ name: 'sites', description: '' }] }]);
    expect(later.list(acme)).toEqual(['acme/sites']);
    expect(later.unmatched(acme)).toEqual(['pemi/grid']);
    expect(() => DatasetSelection.parse('pemi/grid_stress,,glmi/*')).toThrow(/"" is not product\/dataset/);
  });

  it('a pattern is matched when any dataset of the catalog matches it, not only when all do', () => {
    expect(DatasetSelection.parse('gbsi_us/system_stress,pemi/*,gbsi_*/backtest_summary').unmatched(BUILTIN_CATALOG)).toEqual([]);
  });
});
