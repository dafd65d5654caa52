// A Preact hook over a WXT storage item: `undefined` while loading, then the value, kept current.

import { useEffect, useState } from 'preact/hooks';
import type { WxtStorageItem } from 'wxt/utils/storage';

export function useStoredValue<T>(item: WxtStorageItem<T, any>): T | undefined {
  const [value, setValue] = useState<T | undefined>(undefined);
  useEffect(() => {
    let active = true;
    void item.getValue().then((stored) => {
      if (active) setValue(stored);
    });
    const unwatch = item.watch((next) => setValue(next ?? item.fallback));
    return () => {
      active = false;
      unwatch();
    };
  }, [item]);
  return value;
}
