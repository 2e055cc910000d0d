import { createRequire } from 'node:module';
import type pg from 'pg';

/**
 * The parts of a schema that must agree between prisma/schema.prisma and the migrated database:
 * tables, columns with their types and nullability, primary keys, unique and plain indexes, and
 * foreign keys. schema.prisma is read with Prisma's own parser (the Wasm build, which runs offline).
 */
export interface SchemaShape {
  tables: Record<string, { columns: Record<string, string>; keys: string[] }>;
}

interface DmmfField {
  name: string;
  dbName?: string;
  kind: 'scalar' | 'object' | 'enum';
  type: string;
  isList: boolean;
  isRequired: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface Dmmf {
  datamodel: {
    models: DmmfModel[];
    enums: { name: string; dbName?: string | null }[];
    indexes: { model: string; type: 'id' | 'unique' | 'normal' | 'fulltext'; fields: { name: string }[] }[];
  };
}

const DEFAULT_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  DateTime: 'timestamp(3) without time zone',
  Json: 'jsonb',
  Float: 'double precision',
  Decimal: 'numeric(65,30)',
  Bytes: 'bytea',
};

function nativeTypeName([name, args]: [string, string[]]): string {
  const a = args.length ? `(${args.join(',')})` : '';
  switch (name) {
    case 'VarChar':
      return `character varying${a}`;
    case 'Char':
      return `character${a}`;
    case 'Timestamptz':
      return `timestamp${a} with time zone`;
    case 'Timestamp':
      return `timestamp${a} without time zone`;
    case 'Uuid':
      return 'uuid';
    case 'Text':
      return 'text';
    case 'Integer':
      return 'integer';
    case 'SmallInt':
      return 'smallint';
    case 'BigInt':
      return 'bigint';
    case 'JsonB':
      return 'jsonb';
    case 'Json':
      return 'json';
    case 'Boolean':
      return 'boolean';
    case 'DoublePrecision':
      return 'double precision';
    case 'Real':
      return 'real';
    case 'Decimal':
      return `numeric${a}`;
    case 'ByteA':
      return 'bytea';
    case 'Date':
      return 'date';
    default:
      throw new Error(`schema-shape: native type @db.${name} is not mapped yet; add it here`);
  }
}

export function expectedShape(schema: string): SchemaShape {
  const wasm = createRequire(import.meta.url)('@prisma/prisma-schema-wasm') as { get_dmmf(params: string): string };
  const dmmf = JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: [['schema.prisma', schema]] }))) as Dmmf;
  const enums = new Map(dmmf.datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const tableOf = new Map(dmmf.datamodel.models.map((m) => [m.name, m.dbName ?? m.name]));
  const shape: SchemaShape = { tables: {} };
  for (const model of dmmf.datamodel.models) {
    const column = (field: string) => {
      const f = model.fields.find((x) => x.name === field)!;
      return f.dbName ?? f.name;
    };
    const columns: Record<string, string> = {};
    const keys: string[] = [];
    for (const f of model.fields) {
      if (f.kind === 'object') {
        if (f.relationFromFields?.length) {
          const target = dmmf.datamodel.models.find((m) => m.name === f.type)!;
          const targetCol = (name: string) => {
            const tf = target.fields.find((x) => x.name === name)!;
            return tf.dbName ?? tf.name;
          };
          keys.push(`foreign(${f.relationFromFields.map(column).join(',')})->${tableOf.get(f.type)}(${f.relationToFields!.map(targetCol).join(',')})`);
        }
        continue;
      }
      const base = f.kind === 'enum' ? enums.get(f.type)! : f.nativeType ? nativeTypeName(f.nativeType) : DEFAULT_TYPES[f.type];
      columns[f.dbName ?? f.name] = `${base}${f.isList ? '[]' : ''}${f.isRequired ? ' not null' : ''}`;
    }
    for (const index of dmmf.datamodel.indexes.filter((i) => i.model === model.name)) {
      keys.push(`${index.type}(${index.fields.map((x) => column(x.name)).join(',')})`);
    }
    shape.tables[model.dbName ?? model.name] = { columns, keys: keys.sort() };
  }
  return shape;
}

export async function actualShape(client: pg.Client, schema = 'public'): Promise<SchemaShape> {
  const shape: SchemaShape = { tables: {} };
  const table = (name: string) => (shape.tables[name] ??= { columns: {}, keys: [] });
  const columns = await client.query<{ table: string; column: string; type: string; notnull: boolean }>(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND c.relname <> '_prisma_migrations'`,
    [schema],
  );
  for (const r of columns.rows) {
    table(r.table).columns[r.column] = `${r.type.replaceAll('"', '')}${r.notnull ? ' not null' : ''}`;
  }
  const indexes = await client.query<{ table: string; kind: string; cols: string[] }>(
    `SELECT c.relname AS table,
            CASE WHEN i.indisprimary THEN 'id' WHEN i.indisunique THEN 'unique' ELSE 'normal' END AS kind,
            array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS cols
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname <> '_prisma_migrations'`,
    [schema],
  );
  for (const r of indexes.rows) {
    table(r.table).keys.push(`${r.kind}(${r.cols.join(',')})`);
  }
  const fks = await client.query<{ table: string; cols: string[]; target: string; target_cols: string[] }>(
    `SELECT c.relname AS table, t.relname AS target,
            array(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY x(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = x.attnum ORDER BY x.ord)::text[] AS cols,
            array(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY x(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = x.attnum ORDER BY x.ord)::text[] AS target_cols
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class t ON t.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND n.nspname = $1`,
    [schema],
  );
  for (const r of fks.rows) {
    table(r.table).keys.push(`foreign(${r.cols.join(',')})->${r.target}(${r.target_cols.join(',')})`);
  }
  for (const t of Object.values(shape.tables)) t.keys.sort();
  return shape;
}

/** Every disagreement, in words: "api_keys.owner: schema.prisma has character varying(128) not null, database has text". */
export function diffShapes(expected: SchemaShape, actual: SchemaShape): string[] {
  const problems: string[] = [];
  for (const name of new Set([...Object.keys(expected.tables), ...Object.keys(actual.tables)])) {
    const e = expected.tables[name];
    const a = actual.tables[name];
    if (!e || !a) {
      problems.push(`table ${name}: only in ${e ? 'schema.prisma' : 'the database'}`);
      continue;
    }
    for (const col of new Set([...Object.keys(e.columns), ...Object.keys(a.columns)])) {
      if (e.columns[col] !== a.columns[col]) {
        problems.push(`${name}.${col}: schema.prisma has ${e.columns[col] ?? 'nothing'}, the database has ${a.columns[col] ?? 'nothing'}`);
      }
    }
    for (const key of e.keys.filter((k) => !a.keys.includes(k))) problems.push(`${name}: ${key} is in schema.prisma only`);
    for (const key of a.keys.filter((k) => !e.keys.includes(k))) problems.push(`${name}: ${key} is in the database only`);
  }
  return problems;
}
