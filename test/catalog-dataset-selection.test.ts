import { describe, expect, it } from 'vitest';
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

  it('refuses malformed patterns and patterns that match nothing, naming them', () => {
    expect(() => DatasetSelection.parse('gbsi_us')).toThrow(/"gbsi_us" is not product\/dataset/);
    expect(() => DatasetSelection.parse('gbsi_us/')).toThrow(/is not product\/dataset/);
    expect(() => DatasetSelection.parse('g*s/*')).toThrow(/is not product\/dataset/);
    expect(() => DatasetSelection.parse('pemi/grid')).toThrow(
      /^"pemi\/grid" matches none of the named datasets \(gbsi_us\/system_stress, .*, wssi_us\/demand_shock\)$/,
    );
    expect(() => DatasetSelection.parse('pemi/grid_stress,,glmi/*')).toThrow(/"" is not product\/dataset/);
  });
});
