import { describe, expect, it } from 'vitest';
import { dateOf, endAfterHours, endHasPassed, endMs, parseDate, parseEnd, parseInstant, startOfDay } from '../../worker/dates';

// ISO 8601 calendar dates (proleptic Gregorian) and RFC 3339 §5.6 date-times.
describe('parseDate', () => {
  it.each(['2027-01-31', '2028-02-29', '2000-02-29', '0000-01-01', '9999-12-31', '2027-04-30'])('takes %s', (date) => {
    expect(parseDate(date)).toBe(date);
  });

  it.each(['2027-13-45', '2027-02-29', '1900-02-29', '2027-04-31', '2027-00-10', '2027-01-00', '2027-1-01', '27-01-01', '2027-01-01T00:00', ' 2027-01-01', '', '２０２７-01-01'])(
    'refuses %j',
    (text) => {
      expect(parseDate(text)).toBeNull();
    },
  );

  it('gives 00:00 UTC of a date, also for years before 100', () => {
    expect(startOfDay('2027-01-31')).toBe(Date.UTC(2027, 0, 31));
    expect(new Date(startOfDay('0050-03-01')).toISOString()).toBe('0050-03-01T00:00:00.000Z');
    expect(dateOf(startOfDay('2028-02-29') + 86_399_999)).toBe('2028-02-29');
  });
});

describe('parseInstant', () => {
  it.each([
    ['2026-11-21', '2026-11-21T00:00:00.000Z'],
    ['2026-11-21T12:00', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21 12:00:30', '2026-11-21T12:00:30.000Z'],
    ['2026-11-21T12:00:00Z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21t12:00:00z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T12:00:00.5+01:00', '2026-11-21T11:00:00.500Z'],
    ['2026-11-21T12:00:00.123456789-0230', '2026-11-21T14:30:00.123Z'],
    ['2026-01-01T00:30:00+01:00', '2025-12-31T23:30:00.000Z'],
    ['0000-01-01T00:00:00+01:00', '-000001-12-31T23:00:00.000Z'],
  ])('reads %s as %s', (text, stored) => {
    expect(parseInstant(text)).toBe(stored);
  });

  it.each([
    '2027-13-45',
    '2027-02-30T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T12:60:00Z',
    '2026-11-21T12:00:60Z',
    '2026-11-21T12:00:00+24:00',
    '2026-11-21T12:00:00+01:60',
    '2026-11-21T12',
    '2026-11-21T12:00:00.Z',
    'tomorrow',
    '1700000000',
    '',
  ])('refuses %j', (text) => {
    expect(parseInstant(text)).toBeNull();
  });
});

describe('parseEnd (when access ends)', () => {
  it.each([
    ['2027-01-31', '2027-01-31'],
    ['2026-11-27T18:00Z', '2026-11-27T18:00:00.000Z'],
    ['2026-11-27T18:00:59.999Z', '2026-11-27T18:00:00.000Z'],
    ['2026-11-27 19:30+01:00', '2026-11-27T18:30:00.000Z'],
    ['2026-11-27T18:00', '2026-11-27T18:00:00.000Z'],
  ])('keeps %j as %j (a date as it is, a date-time to the minute, in UTC)', (text, stored) => {
    expect(parseEnd(text)).toBe(stored);
  });

  it.each(['2027-02-29', '2027-01-31T', '2027-01-31T25:00', 'tomorrow', ''])('refuses %j', (text) => {
    expect(parseEnd(text)).toBeNull();
  });

  it('orders both forms as text as they take effect: a date at 00:00 UTC, a date-time at its minute', () => {
    const ends = ['2026-11-28', '2026-11-27T23:59:00.000Z', '2026-11-27', '2026-11-27T00:01:00.000Z'];
    expect([...ends].sort()).toEqual([...ends].sort((a, b) => endMs(a) - endMs(b)));
    expect(endMs('2026-11-27')).toBe(Date.parse('2026-11-27T00:00:00Z'));
    expect(endAfterHours(Date.parse('2026-11-27T10:00:30.5Z'), 8)).toBe('2026-11-27T18:00:00.000Z');
  });
});

// GitLab's FutureDateValidator (app/validators/future_date_validator.rb) takes today (GitLab issue 12702).
describe('endHasPassed', () => {
  const now = Date.parse('2026-11-27T10:00:30Z');

  it.each([
    ['2026-11-26', true],
    ['2026-11-27', false],
    ['2026-11-28', false],
    ['2026-11-27T10:00:00.000Z', true],
    ['2026-11-27T10:01:00.000Z', false],
  ])('judges %j at 10:00:30 UTC: passed %j', (end, passed) => {
    expect(endHasPassed(end, now)).toBe(passed);
  });
});
