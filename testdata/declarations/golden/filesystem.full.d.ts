declare const filesystem: {
  /** Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead. */
  read_file(params: {
    path: string;
    /** If provided, returns only the last N lines of the file */
    tail?: number;
    /** If provided, returns only the first N lines of the file */
    head?: number;
  }): Promise<{
    content: string;
  }>;
  /** Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Operates on the file as text regardless of extension. Only works within allowed directories. */
  read_text_file(params: {
    path: string;
    /** If provided, returns only the last N lines of the file */
    tail?: number;
    /** If provided, returns only the first N lines of the file */
    head?: number;
  }): Promise<{
    content: string;
  }>;
  /** Read a file and return it as a base64-encoded content block with its MIME type. Image and audio files are returned as image/audio content; any other file type is returned as an embedded resource. Only works within allowed directories. */
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
  /** Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories. */
  edit_file(params: {
    path: string;
    edits: {
      /** Text to search for - must match exactly */
      oldText: string;
      /** Text to replace with */
      newText: string;
    }[];
    /** Preview changes using git-style diff format */
    dryRun?: boolean;
  }): Promise<{
    content: string;
  }>;
  /** Get a detailed listing of all files and directories in a specified path, including sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is useful for understanding directory structure and finding specific files within a directory. Only works within allowed directories. */
  list_directory_with_sizes(params: {
    path: string;
    /** Sort entries by name or size */
    sortBy?: "name" | "size";
  }): Promise<{
    content: string;
  }>;
  /** Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty). The output is formatted with 2-space indentation for readability. Only works within allowed directories. */
  directory_tree(params: {
    path: string;
    excludePatterns?: string[];
  }): Promise<{
    content: string;
  }>;
  /** Recursively search for files and directories matching a pattern. The patterns should be glob-style patterns that match paths relative to the working directory. Use pattern like '*.ext' to match files in current directory, and '**\/*.ext' to match files in all subdirectories. Returns full paths to all matching items. Great for finding files when you don't know their exact location. Only searches within allowed directories. */
  search_files(params: {
    path: string;
    pattern: string;
    excludePatterns?: string[];
  }): Promise<{
    content: string;
  }>;
  /** Returns the list of directories that this server is allowed to access. Subdirectories within these allowed directories are also accessible. Use this to understand which directories and their nested paths are available before trying to access files. */
  list_allowed_directories(): Promise<{
    content: string;
  }>;
};
