import { levelsAllowedToApprove, type NamespaceKind } from '../../shared/access-levels';

interface Props {
  kind: NamespaceKind;
  approverLevel: number;
  value: number;
  onChange(level: number): void;
  label: string;
  disabled?: boolean;
}

/** Exactly the levels this approver may grant on this kind (shared/access-levels.ts). */
export function LevelPicker({ kind, approverLevel, value, onChange, label, disabled }: Props) {
  return (
    <select
      class="level"
      aria-label={label}
      value={String(value)}
      disabled={disabled}
      onChange={(event) => onChange(Number(event.currentTarget.value))}
    >
      {levelsAllowedToApprove(kind, approverLevel).map((level) => (
        <option key={level.value} value={String(level.value)}>
          {level.name}
        </option>
      ))}
    </select>
  );
}
