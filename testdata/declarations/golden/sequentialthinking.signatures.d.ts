declare const sequentialthinking: {
  sequentialthinking(params: {
    thought: string;
    nextThoughtNeeded: boolean | string;
    thoughtNumber: number;
    totalThoughts: number;
    isRevision?: boolean | string;
    revisesThought?: number;
    branchFromThought?: number;
    branchId?: string;
    needsMoreThoughts?: boolean | string;
  }): Promise<{
    thoughtNumber: number;
    totalThoughts: number;
    nextThoughtNeeded: boolean;
    branches: string[];
    thoughtHistoryLength: number;
  }>;
};
