declare const filesystem: {
  read_file(params: {
    path: string;
    tail?: number;
    head?: number;
  }): Promise<{
    content: string;
  }>;
  read_text_file(params: {
    path: string;
    tail?: number;
    head?: number;
  }): Promise<{
    content: string;
  }>;
  read_media_file(params: {
    path: string;
  }): Promise<{
    content: ({
      type: "image" | "audio";
      data: string;
      mimeType: string;
    } | {
      type: "resource";
      resource: {
        uri: string;
        mimeType?: string;
        blob: string;
      };
    })[];
  }>;
  edit_file(params: {
    path: string;
    edits: {
      oldText: string;
      newText: string;
    }[];
    dryRun?: boolean;
  }): Promise<{
    content: string;
  }>;
  list_directory_with_sizes(params: {
    path: string;
    sortBy?: "name" | "size";
  }): Promise<{
    content: string;
  }>;
  directory_tree(params: {
    path: string;
    excludePatterns?: string[];
  }): Promise<{
    content: string;
  }>;
  search_files(params: {
    path: string;
    pattern: string;
    excludePatterns?: string[];
  }): Promise<{
    content: string;
  }>;
  list_allowed_directories(): Promise<{
    content: string;
  }>;
};
