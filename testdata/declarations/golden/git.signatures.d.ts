declare const git: {
  git_status(params: {
    repo_path: string;
  }): Promise<unknown>;
  git_diff_unstaged(params: {
    repo_path: string;
    context_lines?: number;
  }): Promise<unknown>;
  git_diff(params: {
    repo_path: string;
    target: string;
    context_lines?: number;
  }): Promise<unknown>;
  git_add(params: {
    repo_path: string;
    files: string[];
  }): Promise<unknown>;
  git_log(params: {
    repo_path: string;
    max_count?: number;
    start_timestamp?: string | null;
    end_timestamp?: string | null;
  }): Promise<unknown>;
  git_create_branch(params: {
    repo_path: string;
    branch_name: string;
    base_branch?: string | null;
  }): Promise<unknown>;
  git_branch(params: {
    repo_path: string;
    branch_type: string;
    contains?: string | null;
    not_contains?: string | null;
  }): Promise<unknown>;
};
