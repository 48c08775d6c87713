// The core's memory store against the same contract: both backends of the keyring agree.
import { createMemoryKeyStore } from '@keyset/core';
import { describeKeyStoreContract } from './key-store.contract.ts';

describeKeyStoreContract('memory (core)', async () => ({ store: createMemoryKeyStore() }));
