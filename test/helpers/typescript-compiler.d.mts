export declare const CACHE: string;
export declare function compiledTypeScript(path: string): Promise<string>;
