/**
 * Model files: a model's settings in YAML ({@link dev.itersnap.models.ModelFiles}), and a project, a folder of them
 * with an optional project file of connection profiles, defaults and tags ({@link dev.itersnap.models.Project}). What
 * the command line reads, for an application or a Spark job; core stays free of YAML.
 */
package dev.itersnap.models;
