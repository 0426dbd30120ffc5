/**
 * A metric whose samples are computed when scraped, from numbers the code already keeps
 * (typed-array counters, dataset slots): nothing is done per request on its behalf.
 * prom-client's Registry takes any object with a name and a get() of its samples.
 */
export interface Sample {
  /** for histograms: the `_bucket`, `_sum` or `_count` series */
  metricName?: string;
  labels: Record<string, string>;
  value: number;
}

export interface CustomMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** how AggregatorRegistry.aggregate joins the threads' samples */
  readonly aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }>;
}

function metric(type: CustomMetric['type'], name: string, help: string, values: () => Sample[]): CustomMetric {
  return { name, help, type, aggregator: 'sum', get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: values() }) };
}

export const counter = metric.bind(null, 'counter');
export const gauge = metric.bind(null, 'gauge');
export const histogram = metric.bind(null, 'histogram');
