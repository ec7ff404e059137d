#!/usr/bin/env bash
# Builds itersnap's published artifacts into a throwaway local repository, then builds and tests the example
# project against them, as a new user's project would build (examples/README.md). Extra arguments go to the
# example's build (e.g. -Dcustomers.sequenceBy=loaded_at).
#
# --seeded: the throwaway repository is filled from ~/.m2/repository (or $ITERSNAP_SEED_REPO), read as a file://
# repository searched before Maven Central: third-party artifacts are copied from it (Central serves only what it
# lacks, on a fresh machine the plugins `verify` never ran), nothing is written to it, and itersnap's own artifacts
# come only from the install below (CI: .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
settings=()
if [ "${1:-}" = "--seeded" ]; then
  shift
  seed="${ITERSNAP_SEED_REPO:-$HOME/.m2/repository}"
  cat > "$repo/settings.xml" <<XML
<settings>
  <profiles><profile><id>seed</id>
    <!-- searched before Maven Central, which a machine whose ~/.m2 lacks an artifact (a fresh one) still reaches;
         a local repository keeps no checksum files: nothing to verify against -->
    <repositories><repository><id>seed</id><url>file://$seed</url>
      <releases><checksumPolicy>ignore</checksumPolicy></releases><snapshots><enabled>false</enabled></snapshots></repository></repositories>
    <pluginRepositories><pluginRepository><id>seed</id><url>file://$seed</url>
      <releases><checksumPolicy>ignore</checksumPolicy></releases><snapshots><enabled>false</enabled></snapshots></pluginRepository></pluginRepositories>
  </profile></profiles>
  <activeProfiles><activeProfile>seed</activeProfile></activeProfiles>
</settings>
XML
  settings=(-s "$repo/settings.xml")
fi
mvn -B -q "${settings[@]}" install -DskipTests -Dmaven.repo.local="$repo/m2" -pl bom,testing,dialect-postgres,models,dialect-databricks -am
mvn -B "${settings[@]}" -f examples/customers-model/pom.xml verify -Dmaven.repo.local="$repo/m2" "$@"
# The Spark job example builds into its job JAR (its test, a local Spark session, runs outside CI: examples/README.md)
mvn -B -q "${settings[@]}" -f examples/spark-job/pom.xml package -DskipTests -Dmaven.repo.local="$repo/m2"
test -s examples/spark-job/target/spark-job.jar
# The README's Java quickstart pasted into a new project (its XML snippet alone, Maven's default plugins otherwise):
# its snippets compile with its import list, and the test kit's example holds (examples/README.md)
java examples/readme-quickstart/ReadmeProject.java README.md "$repo/readme-quickstart"
mvn -B "${settings[@]}" -f "$repo/readme-quickstart/pom.xml" verify -Dmaven.repo.local="$repo/m2"
