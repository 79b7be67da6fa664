import { Alert, Anchor, Button, Checkbox, Group, List, Loader, Menu, Paper, Progress, Stack, Text } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { ApiError } from '@svc/api-client';
import { formatNumber } from '@svc/web-ui';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import type { TFunction } from 'i18next';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useLive } from '../events.ts';
import { Dialog } from './dialog.tsx';
import { notify } from './notify.ts';

/**
 * Bulk actions of a list screen (issue 35.3; POST /subscriptions/bulk, /clients/bulk): rows
 * picked one by one (ids), or every row the list's filter matches across all its pages (the
 * filter itself is sent, so rows not loaded yet are included); a bar of actions; a dialog per
 * action that asks for its inputs, shows the dry run (how many, a sample), asks for confirmation,
 * runs the job and follows its progress (`bulk_job` on the event stream, GET /bulk-jobs/{id}
 * as the fallback) to its result.
 */

export type Selection = { kind: 'ids'; ids: ReadonlySet<string> } | { kind: 'filter' };
const NOTHING: Selection = { kind: 'ids', ids: new Set() };

export interface RowSelection<T> {
  selection: Selection;
  isSelected: (row: T) => boolean;
  /** A row's checkbox; with Shift, every row from the last one toggled takes the same state. */
  toggle: (row: T, index: number, range: boolean) => void;
  /** The header checkbox: every loaded row, or none. */
  togglePage: () => void;
  selectMatching: () => void;
  clear: () => void;
  /** Every loaded row is selected (one by one or by the filter). */
  pageSelected: boolean;
  some: boolean;
}

/**
 * What is selected in a list whose rows are `rows` (every page loaded so far); a change of
 * `scope` (the list's filter) clears it.
 */
export function useRowSelection<T>(rows: T[], rowId: (row: T) => string, scope: unknown): RowSelection<T> {
  const [selection, setSelection] = useState<Selection>(NOTHING);
  const scopeKey = JSON.stringify(scope);
  const [seenScope, setSeenScope] = useState(scopeKey);
  const anchor = useRef<number | null>(null);
  if (seenScope !== scopeKey) {
    setSeenScope(scopeKey);
    setSelection(NOTHING);
    anchor.current = null;
  }
  const idsOf = (s: Selection) => (s.kind === 'filter' ? new Set(rows.map(rowId)) : new Set(s.ids));
  const isSelected = (row: T) => selection.kind === 'filter' || selection.ids.has(rowId(row));
  const pageSelected = selection.kind === 'filter' || (rows.length > 0 && rows.every((r) => selection.ids.has(rowId(r))));
  const some = selection.kind === 'filter' || selection.ids.size > 0;
  return {
    selection,
    isSelected,
    pageSelected,
    some,
    toggle: (row, index, range) => {
      const next = idsOf(selection);
      const on = !isSelected(row);
      const from = range && anchor.current !== null ? Math.min(anchor.current, index) : index;
      const to = range && anchor.current !== null ? Math.max(anchor.current, index) : index;
      for (const r of rows.slice(from, to + 1)) {
        if (on) next.add(rowId(r));
        else next.delete(rowId(r));
      }
      anchor.current = index;
      setSelection({ kind: 'ids', ids: next });
    },
    togglePage: () => {
      anchor.current = null;
      setSelection(pageSelected ? NOTHING : { kind: 'ids', ids: new Set(rows.map(rowId)) });
    },
    selectMatching: () => setSelection({ kind: 'filter' }),
    clear: () => {
      anchor.current = null;
      setSelection(NOTHING);
    },
  };
}

/** The checkbox column: the header's selects the loaded rows, each row's its row (named for screen readers). */
export function selectColumn<T>(sel: RowSelection<T>, nameOf: (row: T) => string, t: TFunction) {
  return createColumnHelper<T>().display({
    id: 'select',
    header: () => (
      <Checkbox
        aria-label={t('bulk.selectPage')}
        checked={sel.pageSelected}
        indeterminate={sel.some && !sel.pageSelected}
        onChange={sel.togglePage}
        data-testid="select-page"
      />
    ),
    cell: (c) => (
      // The row's own click (open it) is not the checkbox's.
      // biome-ignore lint/a11y/useKeyWithClickEvents lint/a11y/noStaticElementInteractions: only stops the click reaching the row; the checkbox inside is the control
      <div onClick={(e) => e.stopPropagation()}>
        <Checkbox
          aria-label={t('bulk.selectRow', { name: nameOf(c.row.original) })}
          checked={sel.isSelected(c.row.original)}
          onChange={(e) => sel.toggle(c.row.original, c.row.index, (e.nativeEvent as MouseEvent).shiftKey === true)}
        />
      </div>
    ),
  });
}

/** A count as the reader writes it, "about N" when the list's total is an estimate. */
function useCount() {
  const { t, i18n } = useTranslation();
  return (n: number, exact = true) => (exact ? formatNumber(i18n.language, n) : t('bulk.about', { n: formatNumber(i18n.language, n) }));
}

/**
 * In the bar, once the whole loaded page is selected: the offer to take every row the filter
 * matches (the list's total, across pages not loaded yet).
 */
export function SelectionBanner<T>({
  sel,
  loaded,
  total,
  exact,
  hasMore,
}: {
  sel: RowSelection<T>;
  loaded: number;
  total: number | null;
  exact: boolean | null;
  hasMore: boolean;
}) {
  const { t } = useTranslation();
  const count = useCount();
  // Once taken, the bar says so ("All N matching this filter selected") and clears it.
  if (sel.selection.kind === 'filter' || !sel.pageSelected || total === null || loaded === 0) return null;
  // Every match is on screen already.
  if (!hasMore && total <= loaded) return null;
  return (
    <Group gap="xs" wrap="wrap" mt="xs" pt="xs" className="svc-bulk-banner" data-testid="selection-banner">
      <Text size="sm">{t('bulk.pageSelected', { count: loaded })}</Text>
      <Anchor component="button" type="button" size="sm" fw={600} onClick={sel.selectMatching} data-testid="select-matching">
        {t('bulk.selectMatching', { n: count(total, exact !== false) })}
      </Anchor>
    </Group>
  );
}

/** What a bulk route takes (subscriptions and clients alike). */
export interface BulkAction {
  type: string;
  [field: string]: unknown;
}
export interface BulkBody {
  ids?: string[];
  filter?: Record<string, unknown>;
  action: BulkAction;
  dry_run?: boolean;
}
type BulkJob = AdminSchemas['BulkJob'];
type JobProgress = Pick<BulkJob, 'id' | 'status' | 'done' | 'total' | 'skipped'> & Partial<BulkJob>;

export interface BulkActionDef {
  type: string;
  /** The action's name: its button, the dialog's title. */
  label: string;
  /** Irreversible or disruptive (delete, rotate): a red confirmation that must be ticked. */
  danger?: string;
  /** The action as it starts (its inputs' defaults). */
  initial: BulkAction;
  /** Its inputs, when it has any. */
  inputs?: (action: BulkAction, set: (a: BulkAction) => void) => ReactNode;
  valid?: (action: BulkAction) => boolean;
  /** What it does, in a sentence, with the inputs chosen. */
  describe: (action: BulkAction) => string;
}

export interface BulkTarget<S> {
  /** The query key root of the list (read again at the end). */
  list: string;
  /** "This will change N …" for the dry run's count. */
  willChange: (count: number) => string;
  /** Why items were skipped, said under the result when some were. */
  skippedHint: string;
  post: (body: BulkBody) => Promise<{ dry_run: true; count: number; sample: S[] } | BulkJob>;
  sampleLabel: (s: S) => ReactNode;
  sampleId: (s: S) => string;
}

/** The most ids one request names (the routes' limit); more are selected by the filter. */
const MAX_IDS = 20_000;

const RANK: Record<string, number> = { queued: 0, running: 1, done: 2, failed: 2 };
const finished = (p: JobProgress | null) => p?.status === 'done' || p?.status === 'failed';
/** The later of two views of a job's progress (an event may overtake a GET's answer, or the other way round). */
function later(a: JobProgress | null, b: JobProgress | undefined): JobProgress | null {
  if (!b) return a;
  if (!a || a.id !== b.id) return b;
  const ra = RANK[a.status] ?? 0;
  const rb = RANK[b.status] ?? 0;
  if (rb !== ra) return rb > ra ? { ...a, ...b } : a;
  return b.done >= a.done ? { ...a, ...b } : a;
}

const problemText = (err: unknown): string => {
  if (err instanceof ApiError) {
    const fields = Object.values(err.problem.errors ?? {});
    return [err.problem.detail, ...fields].filter(Boolean).join(' ');
  }
  return err instanceof Error ? err.message : String(err);
};

type Step<S> =
  | { at: 'inputs' }
  | { at: 'checking' }
  | { at: 'preview'; count: number; sample: S[] }
  | { at: 'running'; jobId: string }
  | { at: 'result'; jobId: string };

/**
 * The bar shown while something is selected (the count, the actions, clear), the action's
 * dialog, and the job it started (followed while the screen is open, the dialog shut or not).
 */
export function BulkActions<S>({
  selection,
  selected,
  filter,
  actions,
  target,
  onClear,
  banner,
}: {
  selection: Selection;
  /** How many are selected (for a filter: the list's total), and whether that is counted or estimated. */
  selected: { n: number; exact: boolean };
  /** The list's filter as the bulk route takes it. */
  filter: Record<string, unknown>;
  actions: BulkActionDef[];
  target: BulkTarget<S>;
  onClear: () => void;
  /** Under the bar: the offer to select every match (SelectionBanner). */
  banner?: ReactNode;
}) {
  const { t } = useTranslation();
  const count = useCount();
  const queryClient = useQueryClient();
  const [def, setDef] = useState<BulkActionDef | null>(null);
  const [open, setOpen] = useState(false);
  const [action, setAction] = useState<BulkAction>({ type: '' });
  const [step, setStep] = useState<Step<S>>({ at: 'inputs' });
  const [error, setError] = useState<string | null>(null);
  const [understood, setUnderstood] = useState(false);
  const [busy, setBusy] = useState(false);
  /** The selection a job was started with: cleared at its end unless another was made meanwhile. */
  const startedWith = useRef<Selection | null>(null);
  const body = (): Omit<BulkBody, 'action'> =>
    selection.kind === 'filter' ? { filter } : { ids: [...(selection as { ids: ReadonlySet<string> }).ids] };

  const dryRun = async (a: BulkAction) => {
    setStep({ at: 'checking' });
    setError(null);
    try {
      const res = await target.post({ ...body(), action: a, dry_run: true });
      if ('dry_run' in res) setStep({ at: 'preview', count: res.count, sample: res.sample });
    } catch (err) {
      setError(problemText(err));
      setStep({ at: 'inputs' });
    }
  };
  const tooMany = selection.kind === 'ids' && selection.ids.size > MAX_IDS;
  const start = (d: BulkActionDef) => {
    setDef(d);
    setAction(d.initial);
    setUnderstood(false);
    setError(null);
    setOpen(true);
    if (d.inputs || tooMany) setStep({ at: 'inputs' });
    else void dryRun(d.initial);
  };
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const job = await target.post({ ...body(), action, dry_run: false });
      if (!('dry_run' in job)) {
        startedWith.current = selection;
        // The job as the 202 told it, unless its progress (the event stream) is already here.
        if (!queryClient.getQueryData(['bulk-jobs', job.id])) queryClient.setQueryData(['bulk-jobs', job.id], job);
        setStep({ at: 'running', jobId: job.id });
      }
    } catch (err) {
      setError(problemText(err));
    } finally {
      setBusy(false);
    }
  };
  const jobId = step.at === 'running' || step.at === 'result' ? step.jobId : null;
  const progress = useJobProgress(jobId);
  const openRef = useRef(open);
  openRef.current = open;
  useEffect(() => {
    if (step.at !== 'running' || !finished(progress)) return;
    setStep({ at: 'result', jobId: step.jobId });
    void queryClient.invalidateQueries({ predicate: (q) => q.queryKey[0] === target.list || q.queryKey[0] === 'stats' });
    if (startedWith.current === selection) onClear();
    startedWith.current = null;
    if (!openRef.current && progress) {
      notify(
        progress.status === 'failed'
          ? t('bulk.failed', { error: progress.error ?? '' })
          : t('bulk.finished', { changed: count(progress.done - progress.skipped), skipped: count(progress.skipped) }),
        progress.status === 'failed' ? 'red' : undefined,
      );
    }
  }, [step, progress, queryClient, target.list, selection, onClear, t, count]);

  const some = selection.kind === 'filter' || selection.ids.size > 0;
  const running = step.at === 'running';
  const close = () => {
    setOpen(false);
    // A job still running is followed on (its end is told in a notification); otherwise the dialog starts afresh next time.
    if (!running) setStep({ at: 'inputs' });
  };
  const safe = actions.filter((a) => !a.danger);
  const danger = actions.filter((a) => a.danger);
  const n = count(selected.n, selected.exact);

  return (
    <>
      {some && (
        <Paper withBorder p="xs" mb="xs" role="region" aria-label={t('bulk.bar')} data-testid="bulk-bar">
          <Group gap="xs" justify="space-between" wrap="wrap">
            <Group gap="sm" wrap="nowrap">
              <Text size="sm" fw={600} aria-live="polite" data-testid="bulk-count">
                {selection.kind === 'filter' ? t('bulk.selectedAll', { n }) : t('bulk.selected', { count: selected.n })}
              </Text>
              <Anchor component="button" type="button" size="sm" onClick={onClear}>
                {t('bulk.clear')}
              </Anchor>
            </Group>
            <Group gap={6} wrap="wrap" visibleFrom="md">
              {actions.map((a) => (
                <Button
                  key={a.type}
                  size="compact-sm"
                  variant="light"
                  color={a.danger ? 'red' : undefined}
                  disabled={running}
                  onClick={() => start(a)}
                >
                  {a.label}
                </Button>
              ))}
            </Group>
            {/* No focus placeholder in the menu: a bare div inside role=menu fails axe (aria-required-children). */}
            <Menu position="bottom-end" withInitialFocusPlaceholder={false}>
              <Menu.Target>
                <Button size="compact-sm" hiddenFrom="md" disabled={running}>
                  {t('bulk.actions')}
                </Button>
              </Menu.Target>
              <Menu.Dropdown>
                {/* The dangerous ones last (their dialogs say so in red: red text here falls under 4.5:1). */}
                {[...safe, ...danger].map((a) => (
                  <Menu.Item key={a.type} onClick={() => start(a)}>
                    {a.label}
                  </Menu.Item>
                ))}
              </Menu.Dropdown>
            </Menu>
          </Group>
          {banner}
        </Paper>
      )}
      <Dialog opened={open && def !== null} onClose={close} title={def?.label ?? ''} size="lg">
        {def && (
          <Stack gap="sm" data-testid="bulk-dialog">
            {step.at === 'inputs' && (
              <>
                <Text size="sm">
                  {selection.kind === 'filter' ? t('bulk.selectedAll', { n }) : t('bulk.selected', { count: selected.n })}
                </Text>
                {def.inputs?.(action, setAction)}
                {tooMany && (
                  <Alert color="yellow" role="alert">
                    {t('bulk.tooMany', { max: count(MAX_IDS) })}
                  </Alert>
                )}
                {error && (
                  <Alert color="red" role="alert">
                    {error}
                  </Alert>
                )}
                <Group justify="flex-end" gap="xs">
                  <Button variant="default" onClick={close}>
                    {t('common.cancel')}
                  </Button>
                  <Button disabled={tooMany || (def.valid ? !def.valid(action) : false)} onClick={() => void dryRun(action)}>
                    {t('bulk.continue')}
                  </Button>
                </Group>
              </>
            )}
            {step.at === 'checking' && (
              <Group gap="xs" role="status">
                <Loader size="sm" />
                <Text size="sm">{t('bulk.checking')}</Text>
              </Group>
            )}
            {step.at === 'preview' && (
              <>
                <Alert color={step.count === 0 ? 'gray' : def.danger ? 'red' : 'brand'} data-testid="bulk-preview">
                  <Stack gap={4}>
                    <Text size="sm" fw={600}>
                      {step.count === 0 ? t('bulk.nothing') : target.willChange(step.count)}
                    </Text>
                    <Text size="sm">{def.describe(action)}</Text>
                  </Stack>
                </Alert>
                {step.sample.length > 0 && (
                  <div>
                    <Text size="sm" c="dimmed">
                      {t('bulk.sample')}
                    </Text>
                    <List size="sm" data-testid="bulk-sample">
                      {step.sample.map((s) => (
                        <List.Item key={target.sampleId(s)}>{target.sampleLabel(s)}</List.Item>
                      ))}
                    </List>
                    {step.count > step.sample.length && (
                      <Text size="sm" c="dimmed">
                        {t('bulk.more', { count: step.count - step.sample.length })}
                      </Text>
                    )}
                  </div>
                )}
                {def.danger && step.count > 0 && (
                  <Checkbox
                    color="red"
                    label={def.danger}
                    checked={understood}
                    onChange={(e) => setUnderstood(e.currentTarget.checked)}
                    data-testid="bulk-understood"
                  />
                )}
                {error && (
                  <Alert color="red" role="alert">
                    {error}
                  </Alert>
                )}
                <Group justify="flex-end" gap="xs">
                  {def.inputs && (
                    <Button variant="default" onClick={() => setStep({ at: 'inputs' })}>
                      {t('bulk.back')}
                    </Button>
                  )}
                  <Button variant="default" onClick={close}>
                    {t('common.cancel')}
                  </Button>
                  <Button
                    color={def.danger ? 'red' : undefined}
                    disabled={step.count === 0 || (Boolean(def.danger) && !understood)}
                    loading={busy}
                    onClick={() => void run()}
                    data-testid="bulk-confirm"
                  >
                    {t('bulk.apply', { count: step.count })}
                  </Button>
                </Group>
              </>
            )}
            {(step.at === 'running' || step.at === 'result') && (
              <JobState progress={progress} running={step.at === 'running'} skippedHint={target.skippedHint} onClose={close} />
            )}
          </Stack>
        )}
      </Dialog>
    </>
  );
}

/** A job's progress: its query (GET /bulk-jobs/{id}), which the event stream's `bulk_job` writes into; polled only as a fallback. */
function useJobProgress(id: string | null): JobProgress | null {
  const live = useLive();
  const [progress, setProgress] = useState<JobProgress | null>(null);
  const query = useQuery({
    queryKey: ['bulk-jobs', id],
    queryFn: () => unwrap(api.GET('/api/v1/bulk-jobs/{id}', { params: { path: { id: id as string } } })) as Promise<JobProgress>,
    enabled: id !== null,
    // While the stream is down, poll; while it is up, read now and then in case an event was lost.
    refetchInterval: (q) => (finished((q.state.data as JobProgress | undefined) ?? null) ? false : live ? 10_000 : 1_500),
  });
  useEffect(() => setProgress((p) => later(p, query.data)), [query.data]);
  return progress && progress.id === id ? progress : null;
}

function JobState({
  progress,
  running,
  skippedHint,
  onClose,
}: {
  progress: JobProgress | null;
  running: boolean;
  skippedHint: string;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const count = useCount();
  const done = progress?.done ?? 0;
  const total = progress?.total ?? 0;
  const pct = total === 0 ? (finished(progress) ? 100 : 0) : Math.round((done / total) * 100);
  return (
    <>
      <Stack gap={6} data-testid="bulk-progress">
        <Progress value={pct} size="lg" color={progress?.status === 'failed' ? 'red' : undefined} aria-label={t('bulk.progress')} />
        <Text size="sm" aria-live="polite" data-testid="bulk-progress-text">
          {t('bulk.progressText', { done: count(done), total: count(total) })}
        </Text>
      </Stack>
      {running && (
        <Text size="sm" c="dimmed">
          {t('bulk.background')}
        </Text>
      )}
      {!running && progress?.status === 'done' && (
        <Alert color="brand" title={t('bulk.doneTitle')} data-testid="bulk-result">
          <Text size="sm">{t('bulk.doneBody', { changed: count(done - progress.skipped), skipped: count(progress.skipped) })}</Text>
          {progress.skipped > 0 && (
            <Text size="sm" mt={4}>
              {skippedHint}
            </Text>
          )}
        </Alert>
      )}
      {!running && progress?.status === 'failed' && (
        <Alert color="red" role="alert" data-testid="bulk-result">
          {t('bulk.failed', { error: progress.error ?? '' })}
        </Alert>
      )}
      <Group justify="flex-end">
        <Button variant={running ? 'default' : 'filled'} onClick={onClose}>
          {t('common.close')}
        </Button>
      </Group>
    </>
  );
}

/**
 * BulkActions for a list screen: the count, the filter and the select-all banner read from the
 * list, its selection and its scope (the filter as the list route takes it), one way for every
 * list that runs bulk actions.
 */
export function ListBulkActions<T, S>({
  sel,
  list,
  scope,
  bulk,
}: {
  sel: RowSelection<T>;
  list: { rows: T[]; total: number | null; totalExact: boolean | null; hasMore: boolean };
  scope: Record<string, unknown>;
  bulk: { actions: BulkActionDef[]; target: BulkTarget<S> };
}) {
  return (
    <BulkActions
      selection={sel.selection}
      selected={
        sel.selection.kind === 'filter'
          ? { n: list.total ?? 0, exact: list.totalExact !== false }
          : { n: sel.selection.ids.size, exact: true }
      }
      filter={Object.fromEntries(Object.entries(scope).filter(([, v]) => v !== undefined))}
      actions={bulk.actions}
      target={bulk.target}
      onClear={sel.clear}
      banner={<SelectionBanner sel={sel} loaded={list.rows.length} total={list.total} exact={list.totalExact} hasMore={list.hasMore} />}
    />
  );
}
