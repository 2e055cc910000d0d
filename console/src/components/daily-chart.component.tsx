import type { JSX } from 'preact';
import { operationName } from '../lib/format';

export interface DailyRow {
  day: string;
  operation: string;
  accepted: number;
  succeeded: number;
  failed: number;
}

const BAR = 22;
const GAP = 8;
const HEIGHT = 180;
const LEFT = 40;
const BOTTOM = 46;

/**
 * Tasks per day, one stacked bar a day, one colour an operation (SVG attributes and CSS classes only: no
 * inline style). The same figures follow as a table, for screen readers and exact numbers.
 */
export function DailyChart({ rows, title }: { rows: DailyRow[]; title: string }): JSX.Element {
  const days = [...new Set(rows.map((r) => r.day))].sort();
  const operations = [...new Set(rows.map((r) => r.operation))].sort();
  if (days.length === 0) return <p class="empty">No tasks in this period.</p>;
  const totals = days.map((d) => rows.filter((r) => r.day === d).reduce((n, r) => n + r.accepted, 0));
  const max = Math.max(1, ...totals);
  const width = LEFT + days.length * (BAR + GAP) + GAP;
  const y = (n: number) => (HEIGHT * n) / max;
  return (
    <figure class="chart">
      <svg role="img" aria-labelledby="chart-title" viewBox={`0 0 ${width} ${HEIGHT + BOTTOM}`} width={width} height={HEIGHT + BOTTOM}>
        <title id="chart-title">{title}</title>
        <line class="axis" x1={LEFT - 4} y1={HEIGHT} x2={width} y2={HEIGHT} />
        <text class="tick" x={LEFT - 8} y={12} text-anchor="end">
          {max}
        </text>
        <text class="tick" x={LEFT - 8} y={HEIGHT} text-anchor="end">
          0
        </text>
        {days.map((day, i) => {
          let base = HEIGHT;
          const x = LEFT + GAP + i * (BAR + GAP);
          return (
            <g key={day}>
              {operations.map((op) => {
                const n = rows.find((r) => r.day === day && r.operation === op)?.accepted ?? 0;
                if (n === 0) return null;
                const h = y(n);
                base -= h;
                return (
                  <rect key={op} class={`bar op-${op}`} x={x} y={base} width={BAR} height={h}>
                    <title>{`${day}, ${operationName(op)}: ${n}`}</title>
                  </rect>
                );
              })}
              <text class="tick" x={x + BAR / 2} y={HEIGHT + 14} text-anchor="end" transform={`rotate(-45 ${x + BAR / 2} ${HEIGHT + 14})`}>
                {day.slice(5)}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {operations.map((op) => (
            <li key={op}>
              <svg width="12" height="12" aria-hidden="true">
                <rect class={`bar op-${op}`} width="12" height="12" />
              </svg>{' '}
              {operationName(op)}
            </li>
          ))}
        </ul>
      </figcaption>
      <table class="data">
        <caption>{title} (accepted, succeeded, failed)</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Operation</th>
            <th scope="col">Accepted</th>
            <th scope="col">Succeeded</th>
            <th scope="col">Failed</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.day}-${r.operation}`}>
              <td>{r.day}</td>
              <td>{operationName(r.operation)}</td>
              <td>{r.accepted}</td>
              <td>{r.succeeded}</td>
              <td>{r.failed}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
