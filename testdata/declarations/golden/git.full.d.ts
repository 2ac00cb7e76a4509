declare const git: {
  /** Shows the working tree status */
  git_status(params: {
    repo_path: string;
  }): Promise<unknown>;
  /** Shows changes in the working directory that are not yet staged */
  git_diff_unstaged(params: {
    repo_path: string;
    context_lines?: number;
  }): Promise<unknown>;
  /** Shows differences between branches or commits */
  git_diff(params: {
    repo_path: string;
    target: string;
    context_lines?: number;
  }): Promise<unknown>;
  /** Adds file contents to the staging area */
  git_add(params: {
    repo_path: string;
    files: string[];
  }): Promise<unknown>;
  /** Shows the commit logs */
  git_log(params: {
    repo_path: string;
    max_count?: number;
    /** Start timestamp for filtering commits. Accepts: ISO 8601 format (e.g., '2024-01-15T14:30:25'), relative dates (e.g., '2 weeks ago', 'yesterday'), or absolute dates (e.g., '2024-01-15', 'Jan 15 2024') */
    start_timestamp?: string | null;
    /** End timestamp for filtering commits. Accepts: ISO 8601 format (e.g., '2024-01-15T14:30:25'), relative dates (e.g., '2 weeks ago', 'yesterday'), or absolute dates (e.g., '2024-01-15', 'Jan 15 2024') */
    end_timestamp?: string | null;
  }): Promise<unknown>;
  /** Creates a new branch from an optional base branch */
  git_create_branch(params: {
    repo_path: string;
    branch_name: string;
    base_branch?: string | null;
  }): Promise<unknown>;
  /** List Git branches */
  git_branch(params: {
    /** The path to the Git repository. */
    repo_path: string;
    /** Whether to list local branches ('local'), remote branches ('remote') or all branches('all'). */
    branch_type: string;
    /** The commit sha that branch should contain. Do not pass anything to this param if no commit sha is specified */
    contains?: string | null;
    /** The commit sha that branch should NOT contain. Do not pass anything to this param if no commit sha is specified */
    not_contains?: string | null;
  }): Promise<unknown>;
};
