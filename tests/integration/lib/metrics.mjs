/*
 * metrics.mjs - reading a value out of the relay's Prometheus text.
 *
 * metricValue(text, series): series is a metric name with its labels as
 * they are printed ('relay_events_stored', 'relay_worker_connections{worker="1"}')
 * and gives that line's value; a name ending in '{'
 * ('relay_worker_connections{') gives the sum over all its labelled lines.
 * undefined when no line matches.
 */
export function metricValue(text, series) {
  const prefix = series.endsWith('{') ? series : `${series} `;
  const lines = text.split('\n').filter((l) => l.startsWith(prefix));
  if (lines.length === 0) return undefined;
  return lines.reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}
